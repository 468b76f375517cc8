"""Listener security: SASL (PLAIN, SCRAM) and TLS."""
