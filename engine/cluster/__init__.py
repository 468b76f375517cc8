"""Cluster metadata and the controller that owns it."""
