/**
 * Why a sign-in through the identity provider came back here. The service sends a code
 * (`/login?error=<code>`, src/stackyard/identity/refusals.py), never words: a link to this
 * page is anyone's to make up, so only the messages written here are ever shown (an
 * unknown code gets the general one). What went wrong in detail is for an admin, in the
 * audit log or the service's log.
 */
export function providerRefusalMessage(code: string, provider: string | undefined): string {
  const at = provider ?? "the identity provider";
  switch (code) {
    case "not_set_up":
      return "Sign-in through an identity provider is not set up.";
    case "throttled":
      return "Too many sign-ins were begun from your address. Wait a minute, then try again.";
    case "provider_unreachable":
      return `Cannot reach ${at} right now. Try again later.`;
    case "provider_refused":
      return `The sign-in at ${at} was cancelled or refused.`;
    case "provider_error":
      return `The answer from ${at} cannot be used: an admin finds why in the audit log.`;
    case "start_again":
      return "This sign-in expired, was finished already, or began in another tab: start it again.";
    case "no_role":
      return `Your account at ${at} is in no group that has a role here: ask an admin.`;
    case "groups_left_out":
      return `Your groups at ${at} were left out (too many to send): ask an admin.`;
    case "disabled":
      return "This account is disabled; ask an admin.";
    default:
      return `The sign-in through ${at} did not succeed: an admin finds why in the audit log.`;
  }
}
