"""The web management console (Django). It talks to clusters only through the Kafka protocol."""
