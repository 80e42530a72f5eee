"""Day-to-day operation of a stack's containers: logs, a shell, resource use."""
