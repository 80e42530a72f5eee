"""The service itself: host facts, version check and self-update."""
