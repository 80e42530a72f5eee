import type { Attention, Severity } from "../../api/types";
import type { Tone } from "../../components/tone";
import { withHost } from "../hosts/host";

export const SEVERITY_LABELS: Record<Severity, string> = {
  critical: "Critical",
  warning: "Warning",
  info: "Info",
};

export const SEVERITY_TONES: Record<Severity, Tone> = {
  critical: "bad",
  warning: "warn",
  info: "info",
};

const RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

/**
 * The items most pressing first: critical, then warnings, then information. The server
 * sends them so; the order within a severity (host by host) is kept.
 */
export function byPriority(items: readonly Attention[]): Attention[] {
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => RANK[a.item.severity] - RANK[b.item.severity] || a.index - b.index)
    .map(({ item }) => item);
}

/**
 * Where an item leads: its stack on its host, the Agents page for an agent that cannot be
 * reached or used, or nothing (a host's disk or memory).
 */
export function attentionHref(item: Attention): string | null {
  if (item.stack) return withHost(`/stacks/${encodeURIComponent(item.stack)}`, item.host_id);
  if (item.host_id !== null && (item.kind === "agent_offline" || item.kind === "agent_incompatible")) return "/agents";
  return null;
}
