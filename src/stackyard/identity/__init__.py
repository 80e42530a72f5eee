"""Sign-in through an OpenID Connect identity provider."""
