"""Image registries: references, the v2 client (token flow, HTTPS->HTTP fallback), digests."""
