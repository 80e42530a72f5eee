import { errorMessage } from "../../api/errors";
import { formatDateTime } from "../../components/format";
import { useCan } from "../auth/permissions";
import { useCheckUpdates } from "./queries";

/** "Check now" (asks the registries; for roles that may) and when the last check was. */
export function CheckUpdates({ lastCheck }: { lastCheck: string | null | undefined }) {
  const check = useCheckUpdates();
  const mayCheck = useCan("stacks.checkUpdates");
  return (
    <div className="check-updates">
      {mayCheck && (
        <button type="button" disabled={check.isPending} onClick={() => check.mutate()}>
          {check.isPending ? "Checking…" : "Check now"}
        </button>
      )}
      <span className="muted" data-testid="last-check">
        {lastCheck ? (
          <>
            Last checked <time dateTime={lastCheck}>{formatDateTime(lastCheck)}</time>
          </>
        ) : (
          "Images not checked yet"
        )}
      </span>
      {check.isError && (
        <span className="error" role="alert">
          {errorMessage(check.error)}
        </span>
      )}
    </div>
  );
}
