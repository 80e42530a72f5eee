"""Notifications: events with stable names (`catalogue`), raised where they happen on
this host or an agent, deduplicated per subject (`subjects`), matched by rules to
channels, queued in the database (`outbox`) and delivered through Apprise or a signed
webhook (`delivery`) by one dispatcher with digests and retries."""
