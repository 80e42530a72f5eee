import type { UpdateOutcome } from "../../api/types";
import { formatDateTime } from "../../components/format";

/** Each outcome in a few words. */
export const OUTCOME_TEXT: Record<UpdateOutcome["outcome"], string> = {
  updated: "updated",
  failed: "failed",
  rolled_back: "rolled back",
  rollback_failed: "rollback failed",
  skipped: "skipped",
};

const OUTCOME_CLASS: Record<UpdateOutcome["outcome"], string> = {
  updated: "muted",
  failed: "error",
  rolled_back: "warn-text",
  rollback_failed: "error",
  skipped: "muted",
};

function When({ outcome }: { outcome: UpdateOutcome }) {
  return (
    <span className="muted small">
      {" "}
      (<time dateTime={outcome.at}>{formatDateTime(outcome.at)}</time>,{" "}
      {outcome.by === null ? "by hand" : `by the ${outcome.by}`})
    </span>
  );
}

/** The detail without the "rolled back: " the server starts it with (the sentence says so already). */
function reason(detail: string | null): string {
  return (detail ?? "").replace(/^rolled back:\s*/i, "");
}

/**
 * The last log lines of the service that failed the health gate; the server leaves them
 * out (null) for whoever may not read the stack's logs, since they may hold secrets.
 */
function OutcomeLogs({ logs }: { logs: string[] | null }) {
  if (logs === null) return <p className="muted small">Logs are shown to operators and admins</p>;
  if (logs.length === 0) return null;
  return (
    <pre className="console-output outcome-logs" aria-label="Logs of the service that failed">
      {logs.join("\n")}
    </pre>
  );
}

/** The last update of the stack, by hand or by the auto-update, and how it went. */
export function LastUpdate({ outcome }: { outcome: UpdateOutcome | null }) {
  if (!outcome) return null;
  let text: string;
  if (outcome.outcome === "rolled_back") {
    text = `Last update rolled back: ${reason(outcome.detail) || "its health gate failed"}`;
  } else if (outcome.outcome === "rollback_failed") {
    text = `Last update failed and so did its rollback: ${outcome.detail ?? "what runs now is not known"}`;
  } else {
    const said = outcome.outcome === "updated" ? "succeeded" : OUTCOME_TEXT[outcome.outcome];
    text = `Last update ${said}${outcome.detail ? `: ${outcome.detail}` : ""}`;
  }
  const alarming = outcome.outcome === "rollback_failed";
  return (
    <div className="last-outcome" data-testid="last-update">
      <p className={OUTCOME_CLASS[outcome.outcome]} role={alarming ? "alert" : undefined}>
        {text}
        <When outcome={outcome} />
      </p>
      {(outcome.outcome === "rolled_back" || outcome.outcome === "rollback_failed" || outcome.outcome === "failed") && (
        <OutcomeLogs logs={outcome.logs} />
      )}
    </div>
  );
}

/**
 * When the last auto-update pass touched the stack, and how it went (left out when that
 * was the last update, which `LastUpdate` shows).
 */
export function LastAutoUpdate({
  last,
  lastUpdate = null,
}: {
  last: UpdateOutcome | null;
  lastUpdate?: UpdateOutcome | null;
}) {
  if (!last) return null;
  if (lastUpdate && lastUpdate.at === last.at && lastUpdate.outcome === last.outcome) return null;
  return (
    <p className={`small ${OUTCOME_CLASS[last.outcome]}`} data-testid="last-auto-update">
      Last auto-update <time dateTime={last.at}>{formatDateTime(last.at)}</time>: {OUTCOME_TEXT[last.outcome]}
      {last.detail ? ` (${last.detail})` : ""}
    </p>
  );
}
