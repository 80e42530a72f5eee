import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useEffectEvent, useLayoutEffect, useRef, type ReactNode } from "react";
import type { Run, RunImage, RunLine, RunProgress } from "../../api/types";
import type { HostId } from "../../api/hosts";
import { openNamedStream } from "../../api/streams";
import { ErrorText } from "../../components/ErrorText";
import { formatBytes, formatTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { percentText, ProgressBar } from "../../components/ProgressBar";
import { useHost } from "../hosts/host";
import { invalidateStacks, runEventsUrl, runNameQueryOptions, stackRunQueryOptions } from "./queries";

function isRun(value: unknown): value is Run {
  return Boolean(value && typeof value === "object" && "status" in value && "progress" in value);
}

/**
 * Follows a running run over Server-Sent Events: every `state` replaces the cached run;
 * when the run is over (a final state, or `end`), the stream is closed and the stacks and
 * the update summary are refreshed. The stream is closed on unmount too.
 */
function useRunEvents(host: HostId, stackId: string, transfer: boolean, run: Run | null | undefined) {
  const queryClient = useQueryClient();
  const running = run?.status === "running";
  const runId = run?.id;
  const eventsUrl = runEventsUrl(host, stackId, transfer);

  useEffect(() => {
    if (!running) return undefined;
    const { queryKey } = stackRunQueryOptions(host, stackId, transfer);
    const stream = openNamedStream(eventsUrl);
    const source = stream.source;
    let over = false;
    let sawFinal = false;

    const finish = () => {
      if (over) return;
      over = true;
      stream.done(); // (the server ends it: not cut, see openNamedStream)
      // Without a final state the cached run still says "running": read it again.
      if (!sawFinal) void queryClient.invalidateQueries({ queryKey });
      void invalidateStacks(queryClient, host);
    };

    source.addEventListener("state", (event) => {
      if (over) return;
      let state: unknown;
      try {
        state = JSON.parse((event as MessageEvent<string>).data);
      } catch {
        return;
      }
      if (!isRun(state)) return;
      const final = state.status !== "running";
      sawFinal ||= final;
      queryClient.setQueryData(queryKey, state);
      // The server sends `end` next, but an event without data never reaches the page:
      // a final state is the end.
      if (final) finish();
    });
    source.addEventListener("end", finish);
    source.addEventListener("error", () => {
      // CONNECTING: the browser reconnects and the first state catches up. CLOSED: the
      // server refused the stream (signed out, stack gone); stop following.
      if (source.readyState === EventSource.CLOSED) finish();
    });

    return () => {
      over = true;
      stream.end(); // (asked to end, not cut: see openNamedStream)
    };
  }, [queryClient, host, stackId, transfer, eventsUrl, runId, running]);
}

function counterText(progress: RunProgress): string | null {
  const parts: string[] = [];
  if (progress.bytes_total > 0) {
    parts.push(`${formatBytes(progress.bytes_done)} of ${formatBytes(progress.bytes_total)}`);
  }
  if (progress.layers_total > 0) {
    const items = progress.mode === "transfer" ? "volumes and folders" : "layers";
    parts.push(`${progress.layers_done} of ${progress.layers_total} ${items}`);
  }
  if (!parts.length) return null;
  return (progress.stage ? `${progress.stage}: ` : "") + parts.join(" · ");
}

function containersText(progress: RunProgress): string | null {
  const total = progress.containers.length;
  if (!total) return null;
  const done = progress.containers.filter((c) => c.done).length;
  return `${done} of ${total} ${total === 1 ? "container" : "containers"}`;
}

function ImageBar({ image, index }: { image: RunImage; index: number }) {
  const id = `image-bar-${index}-${image.id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const details = [
    image.status,
    image.bytes_total > 0 ? `${formatBytes(image.bytes_done)} of ${formatBytes(image.bytes_total)}` : "",
    image.layers_total > 0 ? `${image.layers_done} of ${image.layers_total} layers` : "",
  ].filter(Boolean);
  return (
    <li className="image-progress">
      <span className="image-progress-name" id={id}>
        {image.id}
      </span>
      <ProgressBar labelledBy={id} percent={image.percent} tone={image.percent >= 100 ? "good" : undefined} />
      <span className="image-progress-value">{percentText(image.percent)}</span>
      {details.length > 0 && <span className="image-progress-detail muted">{details.join(" · ")}</span>}
    </li>
  );
}

const LEVEL_LABEL: Record<RunLine["level"], string> = { info: "", warning: "Warning: ", error: "Error: " };

/** The raw output, one line per layer or container (updated in place), kept scrolled to the end. */
function OutputLog({ lines, running, hidden = false }: { lines: RunLine[]; running: boolean; hidden?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useLayoutEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [lines]);

  return (
    <div
      ref={box}
      className="console-output"
      role="log"
      aria-label="Output"
      tabIndex={0}
      onScroll={(event) => {
        const el = event.currentTarget;
        // Follow the end unless the reader scrolled up to read.
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
      }}
    >
      {hidden ? (
        <div className="line line-info muted">
          Its output is shown to operators and admins (what commands print may hold secrets).
        </div>
      ) : lines.length === 0 ? (
        <div className="line line-info muted">{running ? "No output yet." : "No output."}</div>
      ) : (
        lines.map((line, i) => (
          <div key={line.id ?? `line-${i}`} className={`line line-${line.level}`} data-level={line.level}>
            {LEVEL_LABEL[line.level] && <span className="visually-hidden">{LEVEL_LABEL[line.level]}</span>}
            {line.text}
          </div>
        ))
      )}
    </div>
  );
}

function StatusLine({ run, name }: { run: Run; name: string }) {
  const errors = run.progress.errors;
  let text: ReactNode;
  let className = "console-status";
  if (run.status === "running") {
    text = `Running ${name}…`;
  } else if (run.status === "succeeded") {
    text = (
      <>
        <strong>{name} succeeded</strong>
        {run.summary && `: ${run.summary}`}
      </>
    );
    className += " success";
  } else if (run.status === "interrupted") {
    text = (
      <>
        <strong>{name} interrupted</strong>: the service stopped while it ran (killed or restarted)
      </>
    );
    className += " error";
  } else if (run.status === "partial") {
    text = (
      <>
        <strong>{name} done in part</strong>: some of what was asked for was left out (the lines starting
        &ldquo;Not&rdquo; say what and why)
      </>
    );
    className += " notice";
  } else if (run.status === "failed" && run.rollback === "done") {
    // The last error says why: "rolled back: web is unhealthy: …".
    const why = errors.map((e) => e.replace(/^rolled back:\s*/i, ""));
    text = (
      <>
        <strong>{name} rolled back</strong>
        {why.length > 0 && `: ${why.join("; ")}`}. The previous images run again.
      </>
    );
    className += " warn-text";
  } else if (run.status === "failed" && run.rollback === "failed") {
    text = (
      <>
        <strong>{name} failed, and so did its rollback</strong>
        {errors.length > 0 && `: ${errors.join("; ")}`}
      </>
    );
    className += " error";
  } else {
    text = (
      <>
        <strong>{name} failed</strong>
        {errors.length > 0 && `: ${errors.join("; ")}`}
      </>
    );
    className += " error";
  }
  return (
    <p className={className} role="status">
      {text}
    </p>
  );
}

/** Draws one run's state: status, the weighted bar, per-image bars, counters and output. */
function RunView({ run, name = run.action }: { run: Run; name?: string }) {
  const { progress } = run;
  const counter = counterText(progress);
  const containers = containersText(progress);
  const tone =
    run.status === "failed" && run.rollback === "done"
      ? "warn"
      : run.status === "failed" || run.status === "interrupted"
      ? "bad"
      : run.status === "succeeded"
        ? "good"
        : run.status === "partial"
          ? "warn"
          : undefined;
  const showErrors = run.status === "running" && progress.errors.length > 0;
  return (
    <div className="run">
      <StatusLine run={run} name={name} />
      {showErrors && (
        <ul className="console-errors error" role="alert" aria-label="Errors">
          {progress.errors.map((err, i) => (
            <li key={i}>{err}</li>
          ))}
        </ul>
      )}
      <div className="main-progress">
        <ProgressBar label="Deploy progress" percent={progress.percent} tone={tone} />
        <span className="progress-value">
          {progress.percent === null ? (run.status === "running" ? "Working…" : "") : percentText(progress.percent)}
        </span>
      </div>
      {(counter || containers) && (
        <p className="console-counter muted">
          {counter && <span data-testid="deploy-counter">{counter}</span>}
          {counter && containers && " · "}
          {containers && <span>{containers}</span>}
        </p>
      )}
      {progress.images.length > 0 && (
        <ul className="image-progress-list" aria-label="Images">
          {progress.images.map((image, i) => (
            <ImageBar key={image.id} image={image} index={i} />
          ))}
        </ul>
      )}
      <OutputLog lines={progress.lines} running={run.status === "running"} hidden={run.output_hidden === true} />
      <p className="console-times muted">
        Started {formatTime(run.started_at)}
        {run.finished_at && <> · finished {formatTime(run.finished_at)}</>}
        {run.exit_code !== null && <> · exit code {run.exit_code}</>}
        {progress.mode === "text" && <> · plain text progress</>}
      </p>
    </div>
  );
}

/**
 * The deploy console of a stack: its current or last run, followed live while it runs
 * (whether this page started it, or it was already running when the page opened).
 */
export function DeployConsole({
  stackId,
  busy,
  title,
  transfer = false,
  embedded = false,
  onClose,
}: {
  stackId: string;
  /** The stack's action in progress as the stack list reports it (e.g. started elsewhere). */
  busy?: string | null;
  title?: ReactNode;
  /** On an agent: follow the central's push or pull of the stack's archives, not the stack's run. */
  transfer?: boolean;
  /** Inside a card that names it (the stack's console tabs): no card and no visible title of its own. */
  embedded?: boolean;
  onClose?: () => void;
}) {
  const queryClient = useQueryClient();
  const host = useHost();
  const options = stackRunQueryOptions(host, stackId, transfer);
  const runQuery = useQuery(options);
  const run = runQuery.data;
  const runStatus = run?.status;
  const named = useQuery({ ...runNameQueryOptions(host, stackId), enabled: !transfer }).data;
  useRunEvents(host, stackId, transfer, run);

  // An action started elsewhere (another tab, the CLI, auto-update): pick it up, when the
  // busy flag changes (not on every fetch).
  const pickUp = useEffectEvent(() => {
    if (runStatus !== "running" && !runQuery.isFetching) {
      void queryClient.invalidateQueries({ queryKey: options.queryKey });
    }
  });
  useEffect(() => {
    if (busy) pickUp();
  }, [busy, host, stackId]);

  return (
    <section className={embedded ? "console" : "card console"} aria-label={`Deploy ${stackId}`}>
      <div className={embedded ? "console-head visually-hidden" : "console-head"}>
        <h2>{title ?? "Deploy console"}</h2>
        {onClose && (
          <button type="button" className="link-button" aria-label={`Close console of ${stackId}`} onClick={onClose}>
            Close
          </button>
        )}
      </div>
      {run ? (
        <RunView run={run} name={named?.run === run.id ? named.name : run.action} />
      ) : runQuery.isError ? (
        <ErrorText error={runQuery.error} />
      ) : runQuery.isPending ? (
        <Loading />
      ) : (
        <p className="muted">No action has run on this stack yet.</p>
      )}
    </section>
  );
}
