"""Remote hosts: the agent's side (its TLS certificate) and the central's (the agents it
keeps, one typed client for what it consumes itself, the streaming proxy)."""
