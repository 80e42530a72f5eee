"""Stackyard: a self-hosted manager for Docker Compose stacks."""

__version__ = "0.1.0"
