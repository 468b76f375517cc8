"""Operator commands of `python -m engine` besides `serve`; they talk to a running engine."""
