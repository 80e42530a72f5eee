import { errorMessage } from "../api/errors";

/** An error message with an optional Retry button. */
export function ErrorBanner({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  return (
    <div className="error-banner" role="alert">
      <span>{errorMessage(error)}</span>
      {onRetry && (
        <button type="button" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}
