"""Why a sign-in through the identity provider did not end signed in, as the browser is
told it: a code, for which the sign-in page has a message of its own
(web/src/features/auth/LoginPage.tsx). Never the words of the error: a callback's
address is anyone's to make up (and to send someone as a link), and what the provider
answered is for the admin, in the audit log or the service's log."""

from __future__ import annotations

from enum import StrEnum

from stackyard.errors import (
    Invalid,
    NotFound,
    ProviderDeclined,
    ProviderError,
    ProviderUnreachable,
    SignInRefused,
    StackyardError,
    TooManyRequests,
)


class Refusal(StrEnum):
    not_set_up = "not_set_up"
    throttled = "throttled"  # too many sign-ins begun from this address
    provider_unreachable = "provider_unreachable"
    provider_refused = "provider_refused"  # the provider did not sign the user in
    provider_error = "provider_error"  # an answer of the provider's that does not hold
    start_again = "start_again"  # expired, finished already, or begun in another browser
    no_role = "no_role"
    groups_left_out = "groups_left_out"
    disabled = "disabled"
    failed = "failed"  # anything else: the audit log says what


def refusal_of(error: StackyardError) -> Refusal:
    """The code for `error`, by its type (never by its words)."""
    if isinstance(error, SignInRefused):
        try:
            return Refusal(error.reason)
        except ValueError:
            return Refusal.failed
    kinds: list[tuple[type[StackyardError], Refusal]] = [
        (NotFound, Refusal.not_set_up),
        (TooManyRequests, Refusal.throttled),
        (ProviderUnreachable, Refusal.provider_unreachable),
        (ProviderDeclined, Refusal.provider_refused),
        (ProviderError, Refusal.provider_error),
        (Invalid, Refusal.start_again),
    ]
    return next((code for kind, code in kinds if isinstance(error, kind)), Refusal.failed)
