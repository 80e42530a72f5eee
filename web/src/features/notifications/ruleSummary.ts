import type { Agent, Channel, NotificationCatalogue, NotificationRule, NotificationRuleSpec } from "../../api/types";
import { eventTitle } from "./events";

/** A rule's host id of the central's own host (the others are agents' ids). */
export const THIS_HOST = 0;

/** What a host of a rule is called: this host, an agent by name, or an agent since deleted. */
export function hostLabel(id: number, agents: readonly Agent[] | undefined): string {
  if (id === THIS_HOST) return "This host";
  const agent = agents?.find((a) => a.id === id);
  if (agent) return agent.name;
  return agents ? `Agent #${id} (deleted)` : `Agent #${id}`;
}

/** What a channel of a rule is called: by name, or one since deleted. */
export function channelLabel(id: number, channels: readonly Channel[] | undefined): string {
  const channel = channels?.find((c) => c.id === id);
  if (channel) return channel.name;
  return channels ? `Channel #${id} (deleted)` : `Channel #${id}`;
}

export function eventsSummary(rule: Pick<NotificationRule, "events">, catalogue: NotificationCatalogue | undefined): string {
  return rule.events.length ? rule.events.map((name) => eventTitle(catalogue, name)).join(", ") : "Every event";
}

export function hostsSummary(rule: Pick<NotificationRule, "hosts">, agents: readonly Agent[] | undefined): string {
  return rule.hosts.length ? rule.hosts.map((id) => hostLabel(id, agents)).join(", ") : "All hosts";
}

export function stacksSummary(rule: Pick<NotificationRule, "stacks">): string {
  return rule.stacks.length ? rule.stacks.join(", ") : "All stacks";
}

export function channelsSummary(rule: Pick<NotificationRule, "channels">, channels: readonly Channel[] | undefined): string {
  return rule.channels.length ? rule.channels.map((id) => channelLabel(id, channels)).join(", ") : "Every channel";
}

/** The spec of a rule as shown (what a PUT sends back). */
export function ruleSpecOf(rule: NotificationRule): NotificationRuleSpec {
  const { id: _id, ...spec } = rule;
  return spec;
}

/** Stack ids as typed: separated by commas or spaces, each once, in the order given. */
export function parseStacks(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}
