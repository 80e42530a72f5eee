import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import { useEffect, useRef, useState } from "react";
import { Link, useParams } from "react-router";
import { csrfToken } from "../../api/client";
import { useCan } from "../auth/permissions";

/** What the shell runs: bash where the container has it, else sh; or one of them, named. */
const COMMANDS = [
  { value: "auto", label: "bash if present, else sh" },
  { value: "sh", label: "sh" },
  { value: "bash", label: "bash" },
] as const;

type Command = (typeof COMMANDS)[number]["value"];
type SessionState = "connecting" | "open" | "closed";

/** The shell's WebSocket address: same origin, the CSRF token as a parameter (a browser's
 * WebSocket sends no header of ours). */
export function shellUrl(stackId: string, container: string, command: Command, cols: number, rows: number): string {
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  const params = new URLSearchParams({
    command,
    cols: String(cols),
    rows: String(rows),
    csrf: csrfToken() ?? "",
  });
  return `${scheme}://${window.location.host}/api/stacks/${encodeURIComponent(stackId)}/containers/${encodeURIComponent(container)}/shell?${params.toString()}`;
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
function ShellTerminal({ stackId, container, command }: { stackId: string; container: string; command: Command }) {
  const hostRef = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<SessionState>("connecting");
  const [note, setNote] = useState<string | null>(null);

  useEffect(() => {
    const host = hostRef.current;
    if (!host) return;
    const terminal = new Terminal({ cursorBlink: true, fontSize: 14, convertEol: false, scrollback: 5000 });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    terminal.open(host);
    fit.fit();
    terminal.focus();
    const socket = new WebSocket(shellUrl(stackId, container, command, terminal.cols, terminal.rows));
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
    observer.observe(host);

    return () => {
      observer.disconnect();
      input.dispose();
      resized.dispose();
      socket.close();
      terminal.dispose();
    };
  }, [stackId, container, command]);

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
  const mayOpen = useCan("stacks.shell");
  const [command, setCommand] = useState<Command>("auto");
  const [session, setSession] = useState(0);

  return (
    <main className="page shell-page">
      <p className="breadcrumb">
        <Link to="/stacks">Stacks</Link> / <Link to={`/stacks/${encodeURIComponent(id)}`}>{id}</Link> /
      </p>
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
          <Link className="button" to={`/stacks/${encodeURIComponent(id)}`}>
            Close
          </Link>
        </div>
      </div>
      {mayOpen ? (
        <ShellTerminal key={`${command}-${session}`} stackId={id} container={container} command={command} />
      ) : (
        <p className="error">Only admins may open a shell in a container.</p>
      )}
    </main>
  );
}
