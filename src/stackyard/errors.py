"""The error tree. Capability code raises these; `api/errors.py` maps them to HTTP once."""

from __future__ import annotations


class StackyardError(Exception):
    """Base of every error Stackyard raises on purpose. `str(error)` is safe to show."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class ConfigError(StackyardError):
    """The settings cannot be used (refused at start-up)."""


class Invalid(StackyardError):
    """The request is malformed or breaks a rule; nothing was changed."""


class ComposeRejected(Invalid):
    """Compose (or Stackyard's own reading of a compose project) refused a file. `reason`
    is the message alone; `label` says which kind of file ("compose file", ".env file")."""

    def __init__(self, reason: str, label: str = "compose file") -> None:
        super().__init__(f"Invalid {label}: {reason}")
        self.reason = reason
        self.label = label


class Unauthorized(StackyardError):
    """No valid credentials."""


class Forbidden(StackyardError):
    """Valid credentials, but not allowed."""


class NotFound(StackyardError):
    """The thing addressed does not exist."""


class Conflict(StackyardError):
    """The request conflicts with the current state (exists already, busy, changed)."""


class TooLarge(StackyardError):
    """The request (its body) is larger than allowed; nothing was read past the limit."""


class TooManyRequests(StackyardError):
    """Slowed down: try again after `retry_after` seconds."""

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class ComputeFailed(StackyardError):
    """Something that should always work did not (a bug, corrupt data): the detail names
    the exception and where it was raised, and the traceback is logged."""


class Unavailable(StackyardError):
    """A dependency (Docker engine, agent, registry) cannot be reached right now."""


class SecretUnreadable(Unavailable):
    """A secret stored sealed (a destination's, a notification channel's, the identity
    provider's, a registry login's) cannot be opened with this instance's secret key: it
    was sealed under another. Raised where the secret is needed, never replaced by an
    empty value; `what` names the record, and the detail says what to do."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"The secret of {what} cannot be read with this instance's secret key "
            "(was STACKYARD_SECRET_KEY changed?): enter it again"
        )
        self.what = what


class DestinationError(StackyardError):
    """A backup destination failed (mount, list, read or write), or is set up wrong (a
    missing bucket or folder). Classified where each library's errors enter
    (`destinations/`)."""


class DestinationUnreachable(DestinationError):
    """Retry later: the server could not be reached, timed out or broke the connection."""


class DestinationDenied(DestinationError):
    """Fix the settings: the credentials were refused, or the SSH host key is not the
    pinned one."""


class GitError(StackyardError):
    """A git server or repository failed us (a ref it does not have, an answer git could
    not use). Classified where the git CLI's failures enter (`git/remote.py`)."""


class GitUnreachable(GitError):
    """Retry later: the git server could not be reached or timed out; the stacks keep
    running the commit they run."""


class GitDenied(GitError):
    """Fix the repository's settings: the server refused the token or deploy key, or its
    SSH host key is not the pinned one."""


# -- agents: classified where aiohttp's errors and statuses enter (agents/client.py) --------


class AgentError(StackyardError):
    """An agent answered something unusable, or refused the central."""


class AgentUnreachable(AgentError):
    """Retry later: the agent is offline (connect error, time-out, a cut connection)."""


class AgentDenied(AgentError):
    """Fix the agent's settings: it refused the token, or its TLS certificate is not the
    pinned one."""


class AgentIncompatible(AgentError):
    """The agent's version is one this central cannot talk to: update one of them."""


# -- registries: classified where httpx's errors and statuses enter (registry/client.py) ---


class RegistryError(StackyardError):
    """A registry (or its token service) answered something unusable: an unexpected
    status, or a body that is not what the protocol says."""


class RegistryUnreachable(RegistryError):
    """Retry later: the registry could not be reached (connect error, timeout, TLS) or
    said it is overloaded or failing (429, 5xx)."""


class RegistryDenied(RegistryError):
    """Fix the credentials: the registry or its token service refused them (401, 403)."""


class NotInRegistry(RegistryError):
    """The registry does not know this repository or tag."""


class ProviderError(StackyardError):
    """The identity provider answered something unusable or refused (a bad discovery
    document, a token that fails its checks, an error from its token endpoint)."""


class ProviderUnreachable(ProviderError):
    """Retry later: the identity provider could not be reached or did not answer in time."""


class ProviderDeclined(ProviderError):
    """The identity provider did not sign the user in (they cancelled, or it refused them):
    its own words are the detail, which anyone can make up in a callback's address."""


class SignInRefused(Forbidden):
    """A sign-in that went well at the identity provider, refused here. `reason` says why,
    as a code the sign-in page has a message for: "no_role" (in no group that has a role
    here), "groups_left_out" (the provider sent no groups: too many), "disabled"."""

    def __init__(self, detail: str, reason: str) -> None:
        super().__init__(detail)
        self.reason = reason
