"""What takes room on a host's engine, what uses it, and a prune that frees exactly what it
showed."""
