"""The web management console (Django). It talks to clusters only through the Kafka protocol."""
from console.celery import app as celery_app

__all__ = ["celery_app"]
