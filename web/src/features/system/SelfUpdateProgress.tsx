import { useEffect, useState } from "react";
import { LOCAL_HOST } from "../../api/hosts";
import type { LastUpdate, UpdateStarted } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { failureSince } from "./failure";
import { readHealth, readUpdateStatus } from "./queries";
import { page } from "./reload";
import { useVersionWatch, WATCH_TIMEOUT_MS, type VersionWatchOptions, type WatchState } from "./versionWatch";

/** How this Stackyard is watched after an update started: `/api/health` until it answers `to_version`. */
export function centralWatch(started: UpdateStarted, before: LastUpdate | null): VersionWatchOptions {
  return {
    target: started.to_version,
    read: async (signal) => ({ version: (await readHealth(signal)).version }),
    // While the old version still answers: has the helper left a failure?
    check: async (signal) => {
      const status = await readUpdateStatus(LOCAL_HOST, { signal });
      return failureSince(status.last_update, before, started.to_version);
    },
  };
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

function Waiting({ state, target }: { state: Extract<WatchState, { phase: "waiting" }>; target: string }) {
  const detail = state.away
    ? "Stackyard is restarting: waiting for it to answer"
    : state.seen
      ? `Version ${state.seen} still answers: the new one is being started`
      : "Waiting for Stackyard to answer";
  return (
    <>
      <p role="status" className="update-progress">
        <span className="spinner" aria-hidden="true" /> Updating to {target}…
      </p>
      <p className="muted">
        {detail} ({seconds(state.elapsedMs)}).
      </p>
      <p className="muted small">
        The service restarts for a few seconds; your stacks keep running. This page reloads by itself once version {target}{" "}
        answers.
      </p>
    </>
  );
}

/**
 * The update of this Stackyard once started: "Updating to X…" while `/api/health` is read every
 * second (failures are the restart), then the page reloads when X answers. After 3 minutes (or
 * a failure the update helper left) it says so and stops.
 */
export function SelfUpdateProgress({
  started,
  before,
  onClose,
}: {
  started: UpdateStarted;
  /** The last update's record before this one started (to tell a new failure). */
  before: LastUpdate | null;
  onClose: () => void;
}) {
  const [watch] = useState(() => centralWatch(started, before));
  const state = useVersionWatch(watch);
  const phase = state?.phase;
  useEffect(() => {
    if (phase === "arrived") page.reload();
  }, [phase]);
  const over = phase === "failed" || phase === "timedOut";
  const target = started.to_version;

  return (
    // Nothing to do while it restarts: Escape closes only once it is over.
    <Dialog title={`Updating Stackyard to ${target}`} onClose={over ? onClose : () => undefined}>
      {!state || state.phase === "waiting" ? (
        <Waiting state={state ?? { phase: "waiting", elapsedMs: 0, seen: null, away: false }} target={target} />
      ) : state.phase === "arrived" ? (
        <p role="status" className="success">
          Version {state.version} answers: reloading…
        </p>
      ) : state.phase === "failed" ? (
        <>
          <p role="alert" className="error">
            {state.failure.message}
          </p>
          {state.failure.output && <pre className="console-output update-output">{state.failure.output}</pre>}
        </>
      ) : (
        <>
          <p role="alert" className="error">
            Stackyard did not answer with version {target} within {Math.round(WATCH_TIMEOUT_MS / 60_000)} minutes
            {state.seen ? `: version ${state.seen} still answers` : ": it does not answer"}.
          </p>
          <p className="muted small">
            Look at the service on its host (<code>docker compose ps</code>, <code>docker compose logs</code>), then reload
            this page: the outcome of the update shows under Stackyard version.
          </p>
        </>
      )}
      {over && (
        <div className="actions dialog-actions">
          <button type="button" className="primary" onClick={() => page.reload()}>
            Reload the page
          </button>
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      )}
    </Dialog>
  );
}
