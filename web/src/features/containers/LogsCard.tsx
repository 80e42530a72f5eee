import {
  useEffect,
  useEffectEvent,
  useId,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from "react";
import { openNamedStream } from "../../api/streams";
import type { LogBatch } from "../../api/types";
import { useHost } from "../hosts/host";
import {
  appendBounded,
  lineHtml,
  logDownloadUrl,
  logStreamUrl,
  matches,
  MAX_LINES,
  shortTime,
  type LogQuery,
  type ShownLine,
} from "./logs";

/** How often arrived lines are drawn (a busy container writes thousands a second). */
const DRAW_MS = 150;

type StreamStatus = "connecting" | "live" | "ended" | "disconnected";

/**
 * A log stream (`url`: Server-Sent Events of `LogBatch`): the tail, then new lines as they
 * come. Lines are drawn a few times a second; while `paused`, they are held (bounded too)
 * and drawn on resume. A broken stream is not reconnected on its own (that would repeat
 * the tail): `reconnect` starts it again.
 */
function useLogStream(url: string, paused: boolean) {
  const [lines, setLines] = useState<ShownLine[]>([]);
  const [held, setHeld] = useState(0);
  const [status, setStatus] = useState<StreamStatus>("connecting");
  const [attempt, setAttempt] = useState(0);
  const pending = useRef<ShownLine[]>([]);
  const isPaused = useEffectEvent(() => paused);

  // Another stream (its filter changed, or a reconnect) starts from nothing.
  const stream = JSON.stringify([url, attempt]);
  const [shownStream, setShownStream] = useState(stream);
  if (shownStream !== stream) {
    setShownStream(stream);
    setLines([]);
    setHeld(0);
    setStatus("connecting");
  }

  useEffect(() => {
    let seq = 0;
    pending.current = [];
    // Named, so that leaving asks the server to end it (not cut: see openNamedStream).
    const stream = openNamedStream(url);
    const source = stream.source;
    source.onopen = () => setStatus("live");
    source.onmessage = (event: MessageEvent<string>) => {
      let batch: LogBatch;
      try {
        batch = JSON.parse(event.data) as LogBatch;
      } catch {
        return;
      }
      setStatus((now) => (now === "connecting" ? "live" : now));
      const numbered = batch.lines.map((line) => ({ ...line, seq: seq++ }));
      pending.current = appendBounded(pending.current, numbered);
      if (batch.end) {
        setStatus("ended");
        stream.done();
      }
    };
    source.onerror = () => {
      if (source.readyState === EventSource.CONNECTING || source.readyState === EventSource.CLOSED) {
        source.close();
        setStatus((now) => (now === "ended" ? now : "disconnected"));
      }
    };
    const timer = window.setInterval(() => {
      if (pending.current.length === 0) return;
      if (isPaused()) {
        setHeld(pending.current.length);
        return;
      }
      const arrived = pending.current;
      pending.current = [];
      setHeld(0);
      setLines((shown) => appendBounded(shown, arrived));
    }, DRAW_MS);
    return () => {
      stream.end();
      window.clearInterval(timer);
    };
  }, [url, attempt]);

  return { lines, held, status, reconnect: () => setAttempt((n) => n + 1) };
}

const STATUS_TEXT: Record<StreamStatus, string> = {
  connecting: "Connecting…",
  live: "Following",
  ended: "Ended",
  disconnected: "Disconnected",
};

/** What a log view shows: every container, one service's, or one container's. */
export interface LogSource {
  service: string;
  containers: string[];
}

/** A stack's logs: every container, one service's or one container's, as the user picks. */
export function LogsCard({
  stackId,
  sources,
  embedded = false,
}: {
  stackId: string;
  sources: LogSource[];
  /** Inside a card that names it (the stack's console tabs): no card and no visible title of its own. */
  embedded?: boolean;
}) {
  // "" all; "service:NAME"; "container:NAME".
  const [choice, setChoice] = useState("");
  const [kind, name] = choice ? (choice.split(/:(.*)/s) as [string, string]) : ["", ""];
  const filter: LogQuery = {
    service: kind === "service" ? name : undefined,
    container: kind === "container" ? name : undefined,
  };
  const host = useHost();
  const picker = (
    <label>
      <span>Containers</span>
      <select value={choice} onChange={(event) => setChoice(event.target.value)}>
        <option value="">All services</option>
        {sources.map((source) => (
          <optgroup key={source.service} label={source.service}>
            <option value={`service:${source.service}`}>{source.service}</option>
            {source.containers.length > 1 &&
              source.containers.map((container) => (
                <option key={container} value={`container:${container}`}>
                  {container}
                </option>
              ))}
          </optgroup>
        ))}
      </select>
    </label>
  );
  return (
    <LogPanel
      url={logStreamUrl(host, stackId, filter)}
      downloadUrl={logDownloadUrl(host, stackId, filter)}
      tools={picker}
      embedded={embedded}
      containerPrefix={`${stackId}-`}
    />
  );
}

/**
 * A card that follows a log stream (`url`), with search, pause, times and, given
 * `downloadUrl`, the whole log as a file; `tools` come first in its tool bar.
 */
export function LogPanel({
  url,
  downloadUrl,
  tools,
  title = "Logs",
  embedded = false,
  containerPrefix = "",
}: {
  url: string;
  downloadUrl?: string;
  tools?: ReactNode;
  title?: string;
  embedded?: boolean;
  /** Left out of the containers' names where lines say them (a stack's: "web-1", not "stack-web-1"). */
  containerPrefix?: string;
}) {
  const [search, setSearch] = useState("");
  const [paused, setPaused] = useState(false);
  const [showTimes, setShowTimes] = useState(true);
  const [atEnd, setAtEnd] = useState(true);
  const { lines, held, status, reconnect } = useLogStream(url, paused);
  const titleId = useId();
  const viewRef = useRef<HTMLDivElement>(null);
  const searchId = useId();

  const shown = useMemo(() => lines.filter((line) => matches(line, search)), [lines, search]);
  const containers = useMemo(() => new Set(lines.map((line) => line.container)).size, [lines]);

  // New lines keep the view at its end, unless the reader scrolled up (or paused).
  useLayoutEffect(() => {
    const view = viewRef.current;
    if (view && atEnd && !paused) view.scrollTop = view.scrollHeight;
  }, [shown, atEnd, paused]);

  function jumpToEnd() {
    const view = viewRef.current;
    if (view) view.scrollTop = view.scrollHeight;
    setAtEnd(true);
  }

  return (
    <section className={embedded ? "logs-card" : "card logs-card"} aria-labelledby={titleId}>
      <h2 id={titleId} className={embedded ? "visually-hidden" : undefined}>
        {title}
      </h2>
      <div className="log-tools">
        {tools}
        <label htmlFor={searchId} className="log-search">
          <span>Search</span>
          <input
            id={searchId}
            type="search"
            value={search}
            placeholder="Text in the lines shown"
            onChange={(event) => setSearch(event.target.value)}
          />
        </label>
        <label className="check">
          <input type="checkbox" checked={showTimes} onChange={(event) => setShowTimes(event.target.checked)} />
          <span>Times</span>
        </label>
        <button type="button" onClick={() => setPaused((now) => !now)} aria-pressed={paused}>
          {paused ? "Resume" : "Pause"}
        </button>
        {downloadUrl && (
          <a className="button" href={downloadUrl} download>
            Download log
          </a>
        )}
      </div>
      <p className="muted small log-status" role="status">
        {STATUS_TEXT[status]}
        {paused && held > 0 ? ` · paused, ${held} new line${held === 1 ? "" : "s"} waiting` : paused ? " · paused" : ""}
        {search ? ` · ${shown.length} of ${lines.length} lines match` : ` · ${lines.length} lines`}
        {lines.length >= MAX_LINES ? ` (the newest ${MAX_LINES}; download for all)` : ""}
        {status === "disconnected" && (
          <>
            {" "}
            <button type="button" className="link-button" onClick={reconnect}>
              Reconnect
            </button>
          </>
        )}
      </p>
      <div
        ref={viewRef}
        className="log-view"
        role="log"
        aria-label="Log lines"
        tabIndex={0}
        onScroll={(event) => {
          const view = event.currentTarget;
          setAtEnd(view.scrollTop + view.clientHeight >= view.scrollHeight - 8);
        }}
      >
        {shown.length === 0 ? (
          <p className="muted log-empty">{status === "connecting" ? "Loading…" : "No lines."}</p>
        ) : (
          shown.map((line) => (
            <div key={line.seq} className={line.stream === "stderr" ? "log-line log-stderr" : "log-line"}>
              {showTimes && (
                <time className="log-time" dateTime={line.time}>
                  {shortTime(line.time)}
                </time>
              )}
              {containers > 1 && (
                <span className="log-container" title={line.container}>
                  {containerPrefix && line.container.startsWith(containerPrefix)
                    ? line.container.slice(containerPrefix.length)
                    : line.container}
                </span>
              )}
              {line.stream === "stderr" && <span className="log-stream" title="standard error">err</span>}
              {/* lineHtml escapes the text; only its colour codes become spans. */}
              <span className="log-text" dangerouslySetInnerHTML={{ __html: lineHtml(line.text) }} />
            </div>
          ))
        )}
      </div>
      {!atEnd && (
        <button type="button" className="log-jump" onClick={jumpToEnd}>
          Jump to the end
        </button>
      )}
    </section>
  );
}
