import { ApiError, errorMessage } from "../api/errors";

/**
 * An error message with an optional Retry button. A refusal of the user's role (403) has
 * no Retry, since asking again can only be refused again: it says whose decision it is.
 */
export function ErrorBanner({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const refused = error instanceof ApiError && error.status === 403;
  const message = errorMessage(error);
  return (
    <div className="error-banner" role="alert">
      <span>
        {message}
        {refused && `${/[.!?]$/.test(message) ? "" : "."} Your role does not allow it: an admin can change your role.`}
      </span>
      {onRetry && !refused && (
        <button type="button" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}
