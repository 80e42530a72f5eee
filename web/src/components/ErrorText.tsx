import { errorMessage } from "../api/errors";

/** What went wrong, as a line of text that screen readers announce at once. */
export function ErrorText({ error }: { error: unknown }) {
  return (
    <p className="error" role="alert">
      {errorMessage(error)}
    </p>
  );
}
