"""Backups: a stack with all its data, captured, verified and restored."""
