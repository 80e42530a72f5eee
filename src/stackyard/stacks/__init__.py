"""Stacks: folders of compose projects, their status, lifecycle runs and image updates.

Host-local: the central service uses it for its own host, and agents for theirs.
"""
