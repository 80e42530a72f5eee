"""Day-to-day operation of containers: a stack's (logs, a shell, resource use) and the
host's containers outside every stack (`outside`)."""
