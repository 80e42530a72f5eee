import { useQueries, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent, type ReactNode } from "react";
import type {
  EventName,
  NotificationCatalogue,
  NotificationRule,
  NotificationRuleSpec,
  NotificationSeverity,
} from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { FormActions } from "../../components/FormActions";
import { agentsQueryOptions } from "../agents/queries";
import { stacksQueryOptions } from "../stacks/queries";
import { eventsBelow, groupEvents, MIN_SEVERITY_LABELS, SEVERITIES, SEVERITY_LABELS } from "./events";
import { channelsQueryOptions, useCreateRule, useUpdateRule } from "./queries";
import { channelLabel, hostLabel, THIS_HOST } from "./ruleSummary";

/** `set` with `value` in or out. */
function toggled<T>(set: ReadonlySet<T>, value: T, on: boolean): Set<T> {
  const next = new Set(set);
  if (on) next.add(value);
  else next.delete(value);
  return next;
}

/** Checkboxes of `items`, those in `checked` ticked. */
function Checks<T extends string | number>({
  items,
  checked,
  onChange,
}: {
  items: readonly { value: T; label: ReactNode }[];
  checked: ReadonlySet<T>;
  onChange: (next: Set<T>) => void;
}) {
  return (
    <div className="check-list">
      {items.map((item) => (
        <label key={item.value} className="check">
          <input
            type="checkbox"
            checked={checked.has(item.value)}
            onChange={(event) => onChange(toggled(checked, item.value, event.target.checked))}
          />
          <span>{item.label}</span>
        </label>
      ))}
    </div>
  );
}

/** What none ticked means, and a way back to it. */
function NoneMeans({ count, all, onClear }: { count: number; all: string; onClear: () => void }) {
  return (
    <p className="muted small">
      {count === 0 ? (
        `None ticked: ${all}.`
      ) : (
        <>
          {count} ticked.{" "}
          <button type="button" className="link-button" onClick={onClear}>
            Untick all ({all})
          </button>
        </>
      )}
    </p>
  );
}

/** The events a rule sends, in groups, each with its usual severity. */
function EventPicks({
  catalogue,
  picked,
  minimum,
  onChange,
}: {
  catalogue: NotificationCatalogue;
  picked: ReadonlySet<EventName>;
  minimum: NotificationSeverity;
  onChange: (next: Set<EventName>) => void;
}) {
  const below = eventsBelow(catalogue, [...picked], minimum);
  return (
    <fieldset>
      <legend>Events</legend>
      <NoneMeans count={picked.size} all="every event" onClear={() => onChange(new Set())} />
      {groupEvents(catalogue.events).map((group) => (
        <fieldset key={group.label} className="event-group">
          <legend>{group.label}</legend>
          <Checks
            items={group.events.map((e) => ({
              value: e.name,
              label: (
                <>
                  {e.title} <span className="muted small">({SEVERITY_LABELS[e.severity].toLowerCase()})</span>
                </>
              ),
            }))}
            checked={picked}
            onChange={onChange}
          />
        </fieldset>
      ))}
      {below.length > 0 && (
        <p className="warn-text small" role="status">
          Below the minimum severity, so not sent as usually raised: {below.map((e) => e.title).join(", ")}.
        </p>
      )}
    </fieldset>
  );
}

/**
 * The stacks a rule may name: those of the hosts it covers (none ticked: this host and
 * every enabled agent), each once; a name the rule has that none of them has (a stack
 * since deleted) shows too, marked, so that it can be unticked.
 */
function useStackItems(hosts: ReadonlySet<number>, named: ReadonlySet<string>) {
  const agents = useQuery(agentsQueryOptions());
  const covered =
    hosts.size > 0 ? [...hosts] : [THIS_HOST, ...(agents.data ?? []).filter((a) => a.enabled).map((a) => a.id)];
  const lists = useQueries({
    queries: covered.map((host) => ({
      ...stacksQueryOptions(host === THIS_HOST ? null : host),
      refetchInterval: false as const,
    })),
  });
  const known = new Set(lists.flatMap((list) => (list.data ?? []).map((stack) => stack.id)));
  const loading = lists.some((list) => list.isPending);
  const missing = [...named].filter((name) => !known.has(name) && !loading);
  const items = [
    ...[...known].sort().map((name) => ({ value: name, label: name })),
    ...missing.sort().map((name) => ({ value: name, label: `${name} (not on these hosts)` })),
  ];
  return { items, loading };
}

/**
 * Add a rule (`rule` null) or edit one: which events (none ticked: every one), from which
 * severity up, on which hosts and stacks (none: all), to which channels (none: every one).
 */
export function RuleDialog({
  rule,
  catalogue,
  onClose,
  onSaved,
}: {
  rule: NotificationRule | null;
  catalogue: NotificationCatalogue;
  onClose: () => void;
  onSaved: (saved: NotificationRule) => void;
}) {
  const agents = useQuery(agentsQueryOptions());
  const channels = useQuery(channelsQueryOptions());
  const create = useCreateRule();
  const update = useUpdateRule();
  const save = rule ? update : create;
  const [name, setName] = useState(rule?.name ?? "");
  const [enabled, setEnabled] = useState(rule?.enabled ?? true);
  const [events, setEvents] = useState<ReadonlySet<EventName>>(new Set(rule?.events ?? []));
  const [minimum, setMinimum] = useState<NotificationSeverity>(rule?.min_severity ?? "info");
  const [hosts, setHosts] = useState<ReadonlySet<number>>(new Set(rule?.hosts ?? []));
  const [stacks, setStacks] = useState<ReadonlySet<string>>(new Set(rule?.stacks ?? []));
  const [picked, setPicked] = useState<ReadonlySet<number>>(new Set(rule?.channels ?? []));
  const stackItems = useStackItems(hosts, stacks);

  // Hosts and channels the rule names that are gone still show, so that they can be unticked.
  const hostIds = [THIS_HOST, ...(agents.data ?? []).map((a) => a.id)];
  const hostItems = [...hostIds, ...[...hosts].filter((id) => !hostIds.includes(id))].map((id) => {
    const agent = agents.data?.find((a) => a.id === id);
    return { value: id, label: `${hostLabel(id, agents.data)}${agent && !agent.enabled ? " (disabled)" : ""}` };
  });
  const channelIds = (channels.data ?? []).map((c) => c.id);
  const channelItems = [...channelIds, ...[...picked].filter((id) => !channelIds.includes(id))].map((id) => ({
    value: id,
    label: channelLabel(id, channels.data),
  }));

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const spec: NotificationRuleSpec = {
      name: name.trim(),
      enabled,
      events: catalogue.events.map((e) => e.name).filter((n) => events.has(n)),
      min_severity: minimum,
      hosts: [...hosts].sort((a, b) => a - b),
      stacks: [...stacks].sort(),
      channels: [...picked].sort((a, b) => a - b),
    };
    if (rule) update.mutate({ id: rule.id, spec }, { onSuccess: onSaved });
    else create.mutate(spec, { onSuccess: onSaved });
  }

  const title = rule ? `Edit ${rule.name}` : "Add a rule";
  return (
    <Dialog title={title} onClose={onClose} className="form-dialog">
      <form className="form" onSubmit={submit} aria-label={title}>
        <Field label="Name">
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <label className="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          <span>Enabled</span>
        </label>
        <Field label="Minimum severity">
          <select value={minimum} onChange={(e) => setMinimum(e.target.value as NotificationSeverity)}>
            {SEVERITIES.map((severity) => (
              <option key={severity} value={severity}>
                {MIN_SEVERITY_LABELS[severity]}
              </option>
            ))}
          </select>
        </Field>
        <EventPicks catalogue={catalogue} picked={events} minimum={minimum} onChange={setEvents} />
        <fieldset>
          <legend>Hosts</legend>
          <NoneMeans count={hosts.size} all="all hosts, agents added later too" onClear={() => setHosts(new Set())} />
          <Checks items={hostItems} checked={hosts} onChange={setHosts} />
          {agents.isError && <ErrorText error={agents.error} />}
        </fieldset>
        <fieldset>
          <legend>Stacks</legend>
          <NoneMeans count={stacks.size} all="all stacks, those added later too" onClear={() => setStacks(new Set())} />
          {stackItems.loading && stackItems.items.length === 0 ? (
            <p className="muted small">Reading the stacks of the hosts the rule covers…</p>
          ) : stackItems.items.length === 0 ? (
            <p className="muted small">No stacks on the hosts the rule covers.</p>
          ) : (
            <Checks items={stackItems.items} checked={stacks} onChange={setStacks} />
          )}
        </fieldset>
        <fieldset>
          <legend>Channels</legend>
          <NoneMeans count={picked.size} all="every channel, those added later too" onClear={() => setPicked(new Set())} />
          <Checks items={channelItems} checked={picked} onChange={setPicked} />
          {channels.isError && <ErrorText error={channels.error} />}
        </fieldset>
        {save.isError && <ErrorText error={save.error} />}
        <FormActions
          label={rule ? "Save changes" : "Add the rule"}
          busyLabel="Saving…"
          busy={save.isPending}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}
