"""Backup schedules: their store, the scheduler that runs them on this host or an agent,
and retention."""
