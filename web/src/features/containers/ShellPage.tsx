import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import { useEffect, useRef, useState } from "react";
import { Link, useParams } from "react-router";
import { csrfToken } from "../../api/client";
import { Loading } from "../../components/Loading";
import { hostPath, type HostId } from "../../api/hosts";
import { useCan } from "../auth/permissions";
import { useHostInfo } from "../hosts/capabilities";
import { useHost, withHost } from "../hosts/host";
import { HostNote, HostSwitcher, HostUnavailable } from "../hosts/HostSwitcher";

/** What the shell runs: bash where the container has it, else sh; or one of them, named. */
const COMMANDS = [
  { value: "auto", label: "bash if present, else sh" },
  { value: "sh", label: "sh" },
  { value: "bash", label: "bash" },
] as const;

type Command = (typeof COMMANDS)[number]["value"];
type SessionState = "connecting" | "open" | "closed";

/** The shell's WebSocket address on `host`: same origin (an agent's through the central),
 * the CSRF token as a parameter (a browser's WebSocket sends no header of ours). */
export function shellUrl(
  host: HostId,
  stackId: string,
  container: string,
  command: Command,
  cols: number,
  rows: number,
): string {
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  const params = new URLSearchParams({
    command,
    cols: String(cols),
    rows: String(rows),
    csrf: csrfToken() ?? "",
  });
  const path = hostPath(
    `/api/stacks/${encodeURIComponent(stackId)}/containers/${encodeURIComponent(container)}/shell`,
    host,
  );
  return `${scheme}://${window.location.host}${path}?${params.toString()}`;
}

/** Close codes of the server (4xxx, like HTTP statuses) and what they mean to the user. */
function closedText(event: CloseEvent): string {
  if (event.code === 4401) return "Not signed in: sign in again and reopen the shell.";
  if (event.code === 4403) return event.reason || "Only admins may open a shell.";
  if (event.reason) return event.reason;
  return "The session has ended.";
}

/**
 * A terminal in a running container (xterm.js over a WebSocket). The terminal follows the
 * window's size; closing the page (or leaving it) ends the session and everything it started.
 */
function ShellTerminal({
  host,
  stackId,
  container,
  command,
}: {
  host: HostId;
  stackId: string;
  container: string;
  command: Command;
}) {
  const hostRef = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<SessionState>("connecting");
  const [note, setNote] = useState<string | null>(null);

  useEffect(() => {
    const element = hostRef.current;
    if (!element) return;
    const terminal = new Terminal({ cursorBlink: true, fontSize: 14, convertEol: false, scrollback: 5000 });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    terminal.open(element);
    fit.fit();
    terminal.focus();
    const socket = new WebSocket(shellUrl(host, stackId, container, command, terminal.cols, terminal.rows));
    socket.binaryType = "arraybuffer";
    const encoder = new TextEncoder();

    socket.onopen = () => setState("open");
    socket.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
      if (typeof event.data === "string") {
        try {
          const message = JSON.parse(event.data) as { type?: string; detail?: string };
          if (message.type === "error") setNote(message.detail ?? "The shell could not start.");
        } catch {
          terminal.write(event.data);
        }
        return;
      }
      terminal.write(new Uint8Array(event.data));
    };
    socket.onclose = (event) => {
      setState("closed");
      setNote((current) => current ?? closedText(event));
    };
    const input = terminal.onData((data) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(encoder.encode(data));
    });
    const resized = terminal.onResize(({ cols, rows }) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "resize", cols, rows }));
    });
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(element);

    return () => {
      observer.disconnect();
      input.dispose();
      resized.dispose();
      socket.close();
      terminal.dispose();
    };
  }, [host, stackId, container, command]);

  return (
    <>
      <p className="muted small" role="status" data-testid="shell-state">
        {state === "connecting" ? "Connecting…" : state === "open" ? "Connected" : "Closed"}
        {note ? ` · ${note}` : ""}
      </p>
      <div ref={hostRef} className="terminal-host" data-testid="terminal" />
    </>
  );
}

export function ShellPage() {
  const { id = "", container = "" } = useParams();
  const host = useHost();
  const info = useHostInfo(host);
  const unavailable = info.unavailable("shell");
  const mayOpen = useCan("stacks.shell");
  const [command, setCommand] = useState<Command>("auto");
  const [session, setSession] = useState(0);
  const stackHref = withHost(`/stacks/${encodeURIComponent(id)}`, host);

  return (
    <main className="page shell-page">
      <div className="host-bar">
        <p className="breadcrumb">
          <Link to={withHost("/stacks", host)}>Stacks</Link> / <Link to={stackHref}>{id}</Link> /
        </p>
        <HostSwitcher page="/stacks" />
      </div>
      <div className="page-head title-row">
        <h1>
          Shell in <code>{container}</code>
        </h1>
        <div className="page-tools">
          <label>
            <span>Program </span>
            <select value={command} onChange={(event) => setCommand(event.target.value as Command)}>
              {COMMANDS.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={() => setSession((n) => n + 1)}>
            New session
          </button>
          <Link className="button" to={stackHref}>
            Close
          </Link>
        </div>
      </div>
      <HostNote info={info} />
      {!mayOpen ? (
        <p className="error">Only admins may open a shell in a container.</p>
      ) : unavailable ? (
        <HostUnavailable reason={unavailable} />
      ) : !info.ready ? (
        <Loading />
      ) : (
        <ShellTerminal
          key={`${host}-${command}-${session}`}
          host={host}
          stackId={id}
          container={container}
          command={command}
        />
      )}
    </main>
  );
}
