import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { LOCAL_HOST } from "../../api/hosts";
import type { LastUpdate, UpdateStarted, UpdateStatus } from "../../api/types";
import { ConfirmDialog } from "../../components/Dialog";
import { ErrorBanner } from "../../components/ErrorBanner";
import { ErrorText } from "../../components/ErrorText";
import { formatAgo, formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { useCan } from "../auth/permissions";
import { updateStatusQueryOptions, useCheckForUpdate, useStartUpdate } from "./queries";
import { SelfUpdateProgress } from "./SelfUpdateProgress";
import { sameVersion } from "./versionWatch";

function When({ at }: { at: string }) {
  return (
    <time dateTime={at} title={formatDateTime(at)}>
      {formatAgo(at)}
    </time>
  );
}

/** The outcome of the last update; its output when it failed. */
export function LastUpdateNote({ last }: { last: LastUpdate }) {
  const ok = last.status === "succeeded";
  return (
    <div className="last-update">
      <p className={ok ? "success" : "error"}>
        Last update: {last.from_version} → {last.to_version}{" "}
        {ok ? "succeeded" : last.status === "rolled_back" ? "rolled back" : "failed"}
        {last.why && ` (${last.why})`}{" "}
        <span className="muted">
          (<When at={last.finished_at} />)
        </span>
      </p>
      {!ok && last.output && (
        <pre className="console-output update-output" aria-label="Output of the last update">
          {last.output}
        </pre>
      )}
    </div>
  );
}

/**
 * What became of the last try of the release offered now, when it did not hold: "2.1.0 was
 * rolled back on <date>: <reason>", said beside its Update button. Null when the offered
 * release was never tried, or was installed.
 */
export function OfferedBefore({ last, offered }: { last: LastUpdate | null; offered: string }) {
  if (!last || last.status === "succeeded" || !sameVersion(last.to_version, offered)) return null;
  const what = last.status === "rolled_back" ? "was rolled back" : "failed";
  return (
    <p className="warn-text" data-testid="offered-before">
      {last.to_version} {what} on <time dateTime={last.finished_at}>{formatDateTime(last.finished_at)}</time>
      {last.why ? `: ${last.why}` : ""}. Updating tries it again.
    </p>
  );
}

/** A sentence the UI ends itself: its own full stop dropped. */
function withoutStop(text: string): string {
  return text.replace(/\.\s*$/, "");
}

function LatestRelease({ status }: { status: UpdateStatus }) {
  if (!status.latest_version) {
    return <span className="muted">{status.check_error ? "Could not be read" : "Not known yet"}</span>;
  }
  // A newer one is announced below, with its update.
  return (
    <>
      {status.latest_version} {!status.update_available && <span className="pill tone-good">Up to date</span>}
    </>
  );
}

/**
 * Settings, "Stackyard version": the running version and the latest release (the highest
 * X.Y.Z tag of the service's image repository, checked every 10 minutes or now), and for
 * admins the update to it: confirmed, then followed until the new version answers and the
 * page reloads. Where the installation cannot update itself, why not.
 */
export function VersionSection() {
  const status = useQuery(updateStatusQueryOptions(LOCAL_HOST));
  const check = useCheckForUpdate(LOCAL_HOST);
  const start = useStartUpdate(LOCAL_HOST);
  const mayUpdate = useCan("system.update");
  const [confirming, setConfirming] = useState(false);
  const [started, setStarted] = useState<{ update: UpdateStarted; before: LastUpdate | null } | null>(null);
  const data = status.data;

  function confirm() {
    const before = data?.last_update ?? null;
    start.mutate(undefined, {
      onSuccess: (update) => setStarted({ update, before }),
      onSettled: () => setConfirming(false),
    });
  }

  return (
    <section className="card version-section" aria-labelledby="version-title" id="version">
      <div className="section-head">
        <h2 id="version-title">Stackyard version</h2>
        {data?.update_supported && (
          <button
            type="button"
            disabled={check.isPending}
            onClick={() => {
              start.reset();
              check.mutate();
            }}
          >
            {check.isPending ? "Checking…" : "Check now"}
          </button>
        )}
      </div>
      {status.isError && !data ? (
        <ErrorBanner error={status.error} onRetry={() => void status.refetch()} />
      ) : !data ? (
        <Loading />
      ) : (
        <>
          <dl className="facts">
            <dt>Running</dt>
            <dd data-testid="running-version">{data.current_version}</dd>
            {(data.update_supported || data.latest_version) && (
              <>
                <dt>Latest release</dt>
                <dd>
                  <LatestRelease status={data} />
                  {data.checked_at && (
                    <span className="muted small">
                      {" "}
                      checked <When at={data.checked_at} />
                      {data.repository && (
                        <>
                          {" "}
                          in <code>{data.repository}</code>
                        </>
                      )}
                    </span>
                  )}
                </dd>
              </>
            )}
          </dl>
          {data.check_error && (
            <p className="error">The latest release could not be read: {data.check_error}</p>
          )}
          {!data.update_supported ? (
            <p className="muted" role="note">
              Self-update is not available here: {withoutStop(data.reason ?? "this installation cannot update itself")}.
            </p>
          ) : data.update_available && data.latest_version ? (
            <div className="update-offer">
              <p>
                <strong>Update available: {data.latest_version}</strong>
              </p>
              <OfferedBefore last={data.last_update} offered={data.latest_version} />
              {mayUpdate ? (
                <button type="button" className="primary" onClick={() => setConfirming(true)}>
                  Update to {data.latest_version}
                </button>
              ) : (
                <p className="muted small">An admin can update Stackyard here.</p>
              )}
            </div>
          ) : null}
          {data.last_update && <LastUpdateNote last={data.last_update} />}
        </>
      )}
      {check.isError && <ErrorText error={check.error} />}
      {start.isError && <ErrorText error={start.error} />}
      {confirming && data?.latest_version && (
        <ConfirmDialog
          title={`Update Stackyard to ${data.latest_version}?`}
          confirmLabel="Update now"
          busy={start.isPending}
          onCancel={() => setConfirming(false)}
          onConfirm={confirm}
        >
          <p>
            Stackyard pulls version {data.latest_version}, then restarts on it: the service is unavailable for a few
            seconds. Your stacks keep running.
          </p>
          <p className="muted small">This page reloads by itself once the new version answers.</p>
        </ConfirmDialog>
      )}
      {started && (
        <SelfUpdateProgress
          started={started.update}
          before={started.before}
          onClose={() => {
            setStarted(null);
            void status.refetch();
          }}
        />
      )}
    </section>
  );
}
