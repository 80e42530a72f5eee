import { AnsiUp } from "ansi_up";
import { hostPath, type HostId } from "../../api/hosts";
import type { LogLine } from "../../api/types";
import { formatTime } from "../../components/format";

/** Lines a log view keeps; older ones are dropped (the whole log is a download away). */
export const MAX_LINES = 5_000;

/** A line as the view keeps it: numbered, so React keeps its row across updates. */
export interface ShownLine extends LogLine {
  seq: number;
}

export interface LogQuery {
  /** One service's containers; all of the stack's when unset. */
  service?: string;
  /** One container. */
  container?: string;
  /** Lines before following. */
  tail?: number;
}

function query(params: Record<string, string | number | undefined>): string {
  const pairs = Object.entries(params).filter(([, v]) => v !== undefined && v !== "");
  return pairs.length ? `?${new URLSearchParams(pairs.map(([k, v]) => [k, String(v)])).toString()}` : "";
}

/** The live stream of a stack's logs on `host` (Server-Sent Events of `LogBatch`, same origin). */
export function logStreamUrl(host: HostId, stackId: string, { service, container, tail }: LogQuery = {}): string {
  return hostPath(`/api/stacks/${encodeURIComponent(stackId)}/logs${query({ service, container, tail })}`, host);
}

/** The whole log as a file (the browser streams it to disk). */
export function logDownloadUrl(host: HostId, stackId: string, { service, container }: LogQuery = {}): string {
  return hostPath(`/api/stacks/${encodeURIComponent(stackId)}/logs/download${query({ service, container })}`, host);
}

/** `lines` with `more` after them, only the last `max` kept. */
export function appendBounded<T>(lines: readonly T[], more: readonly T[], max = MAX_LINES): T[] {
  if (more.length >= max) return more.slice(more.length - max);
  const kept = Math.max(0, lines.length + more.length - max);
  return [...lines.slice(kept), ...more];
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g;

/** The text without its terminal colour codes (what a search looks at). */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

/** Whether a line holds `needle` (case-insensitive), in its text or its container's name. */
export function matches(line: LogLine, needle: string): boolean {
  if (!needle) return true;
  const wanted = needle.toLowerCase();
  return stripAnsi(line.text).toLowerCase().includes(wanted) || line.container.toLowerCase().includes(wanted);
}

const converter = new AnsiUp();
converter.use_classes = true;

/** A line's text as HTML with its colours: ANSI codes become spans, everything else is escaped. */
export function lineHtml(text: string): string {
  return converter.ansi_to_html(text);
}

/** "15:04:05.123" of an engine timestamp, in local time (the UI's one time format). */
export function shortTime(stamp: string): string {
  return formatTime(stamp, { millis: true });
}
