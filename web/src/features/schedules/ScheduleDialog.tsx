import { useQuery } from "@tanstack/react-query";
import { useId, useMemo, useState, type FormEvent } from "react";
import type { Schedule, ScheduleSpec } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { Loading } from "../../components/Loading";
import type { HostId } from "../../api/hosts";
import { agentsQueryOptions } from "../agents/queries";
import { typeTag } from "../destinations/destinationTypes";
import { destinationsQueryOptions } from "../destinations/queries";
import { useHostInfo } from "../hosts/capabilities";
import { parseHost } from "../hosts/host";
import { stacksQueryOptions } from "../stacks/queries";
import { DEFAULT_SETTLE_SECONDS } from "../backups/DrillDialog";
import { DEFAULT_PRUNE_OPTIONS, PruneOptionsFields } from "../disk/PruneOptionsFields";
import { NextRuns } from "./NextRuns";
import { useCreateSchedule, useUpdateSchedule } from "./queries";
import {
  browserTimeZone,
  knownTimeZones,
  PRESETS,
  presetOf,
  type Preset,
} from "./timetable";
import { FormActions } from "../../components/FormActions";

type TimetableChoice = Preset | "custom";
type Kind = ScheduleSpec["kind"];

function NumberField({
  label,
  value,
  min,
  max = 10000,
  onChange,
}: {
  label: string;
  value: number;
  min: number;
  max?: number;
  onChange: (value: number) => void;
}) {
  return (
    <Field label={label}>
      <input
        type="number"
        required
        min={min}
        max={max}
        value={Number.isNaN(value) ? "" : value}
        onChange={(event) => onChange(event.target.valueAsNumber)}
      />
    </Field>
  );
}

/**
 * Whose stacks a schedule backs up: this host or an enabled agent (the schedule's own agent
 * stays listed when it was disabled or deleted since, so that editing keeps it).
 */
function HostSelect({ value, onChange }: { value: HostId; onChange: (host: HostId) => void }) {
  const agents = useQuery(agentsQueryOptions());
  const choices = (agents.data ?? []).filter((agent) => agent.enabled || agent.id === value);
  const known = value === null || choices.some((agent) => agent.id === value);
  return (
    <Field label="Host">
      <select value={value ?? ""} onChange={(event) => onChange(parseHost(event.target.value))}>
        <option value="">This host</option>
        {choices.map((agent) => (
          <option key={agent.id} value={agent.id}>
            {agent.name}
            {agent.enabled ? "" : " (disabled)"}
          </option>
        ))}
        {!known && value !== null && <option value={value}>Agent #{value}{agents.data ? " (gone)" : ""}</option>}
      </select>
    </Field>
  );
}

/**
 * Create or edit a schedule: what it does (back up, a restore drill of each stack's latest
 * backup, or prune the host's disk), on which host (this one or an agent), which stacks (every
 * one, or those picked), when (a preset or a cron expression, in a time zone, with the next runs
 * shown live); for a backup where the archives go, what is captured and what is kept; for a
 * drill where the latest backup is taken from and how long the clone must settle; for a prune
 * what it takes (stacks, destination and retention do not apply to it).
 */
export function ScheduleDialog({
  schedule,
  onClose,
  onSaved,
}: {
  schedule: Schedule | null;
  onClose: () => void;
  onSaved: (saved: Schedule) => void;
}) {
  const editing = schedule !== null;
  const [host, setHost] = useState<HostId>(schedule?.agent_id ?? null);
  const info = useHostInfo(host);
  const stacksUnavailable = info.unavailable("stacks");
  const [everyStack, setEveryStack] = useState(schedule ? !schedule.stacks : true);
  const [kind, setKind] = useState<Kind>(schedule?.kind ?? "backup");
  const drill = kind === "drill";
  const prune = kind === "prune";
  // The chosen host's stacks, read once they are to be picked (an agent's through the proxy).
  const stacks = useQuery({
    ...stacksQueryOptions(host),
    enabled: !prune && !everyStack && info.ready && !stacksUnavailable,
  });
  const destinations = useQuery(destinationsQueryOptions());
  const create = useCreateSchedule();
  const update = useUpdateSchedule();
  const save = editing ? update : create;
  const [name, setName] = useState(schedule?.name ?? "");
  const [pruneOptions, setPruneOptions] = useState(schedule?.prune ?? DEFAULT_PRUNE_OPTIONS);
  const diskUnavailable = prune ? info.unavailable("disk") : null;
  const [settle, setSettle] = useState(schedule?.settle_seconds ?? DEFAULT_SETTLE_SECONDS);
  const [picked, setPicked] = useState<Set<string>>(new Set(schedule?.stacks ?? []));
  const [choice, setChoice] = useState<TimetableChoice>(schedule ? (presetOf(schedule.cron) ?? "custom") : "daily");
  const [custom, setCustom] = useState(schedule?.cron ?? PRESETS.daily.cron);
  const [timezone, setTimezone] = useState(schedule?.timezone ?? browserTimeZone);
  const [destinationId, setDestinationId] = useState<number | null>(schedule?.destination_id ?? null);
  const [includeBinds, setIncludeBinds] = useState(schedule?.capture?.include_binds ?? true);
  const [keep, setKeep] = useState({
    last: schedule?.keep_last ?? 7,
    daily: schedule?.keep_daily ?? 0,
    weekly: schedule?.keep_weekly ?? 0,
    monthly: schedule?.keep_monthly ?? 0,
  });
  const [enabled, setEnabled] = useState(schedule?.enabled ?? true);
  const [zones] = useState(knownTimeZones);
  const zonesId = useId();
  // Some 400 suggestions: made once, not again on every key typed in the form.
  const zoneList = useMemo(
    () =>
      zones.length > 0 && (
        <datalist id={zonesId}>
          {zones.map((zone) => (
            <option key={zone} value={zone} />
          ))}
        </datalist>
      ),
    [zones, zonesId],
  );
  const cron = choice === "custom" ? custom : choice;
  const here = host === null ? "This host" : info.name;
  // Stacks named by the schedule that are gone still show, so they can be unticked.
  const stackIds = [...new Set([...(stacks.data ?? []).map((s) => s.id), ...picked])].sort();

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    // A drill takes neither capture nor retention: what was there is sent back untouched. A
    // prune takes no stacks and no destination; the other kinds send back the prune options
    // they were read with, if any.
    const spec: ScheduleSpec = {
      name: name.trim(),
      kind,
      agent_id: host,
      stacks: everyStack || prune ? null : [...picked].sort(),
      cron: cron.trim(),
      timezone: timezone.trim(),
      destination_id: prune ? null : destinationId,
      // Volumes and binds as each stack's inventory chooses them; an edit keeps a choice made elsewhere.
      capture: { volumes: null, binds: null, ...schedule?.capture, include_binds: includeBinds },
      keep_last: keep.last,
      keep_daily: keep.daily,
      keep_weekly: keep.weekly,
      keep_monthly: keep.monthly,
      settle_seconds: settle,
      ...(prune || schedule?.prune ? { prune: pruneOptions } : {}),
      enabled,
    };
    if (schedule) update.mutate({ id: schedule.id, spec }, { onSuccess: onSaved });
    else create.mutate(spec, { onSuccess: onSaved });
  }

  const title = editing ? `Edit ${schedule.name}` : "Add a schedule";
  return (
    <Dialog title={title} onClose={onClose} className="form-dialog">
      <form className="form" onSubmit={submit} aria-label={title}>
        <Field label="Name">
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>

        <fieldset>
          <legend>Kind</legend>
          <label className="check">
            <input type="radio" name="kind" checked={kind === "backup"} onChange={() => setKind("backup")} />
            <span>Back up</span>
          </label>
          <label className="check">
            <input type="radio" name="kind" checked={drill} onChange={() => setKind("drill")} />
            <span>Restore drill</span>
          </label>
          <label className="check">
            <input type="radio" name="kind" checked={prune} onChange={() => setKind("prune")} />
            <span>Prune the disk</span>
          </label>
          {drill && (
            <p className="muted small">
              Each stack's latest backup is restored into a scratch clone, compared with the archive, started without
              network or published ports, and removed. The stacks themselves are not touched.
            </p>
          )}
          {prune && (
            <p className="muted small">
              The host's disk is pruned as by hand on its Disk page: a preview, then exactly the objects it listed. What it
              freed goes to the host's prune history and to notifications.
            </p>
          )}
        </fieldset>

        <HostSelect
          value={host}
          onChange={(next) => {
            // Another host's stacks: what was picked named this one's.
            if (next !== host) setPicked(new Set());
            setHost(next);
          }}
        />

        {diskUnavailable && <p className="error small">{diskUnavailable}</p>}

        {!prune && (
          <fieldset>
            <legend>Stacks{host === null ? "" : ` on ${info.name}`}</legend>
            <label className="check">
              <input type="radio" name="stacks" checked={everyStack} onChange={() => setEveryStack(true)} />
              <span>Every stack (those added later too)</span>
            </label>
            <label className="check">
              <input type="radio" name="stacks" checked={!everyStack} onChange={() => setEveryStack(false)} />
              <span>Only the stacks picked here</span>
            </label>
            {!everyStack &&
              (stacksUnavailable ? (
                <p className="error small">{stacksUnavailable}</p>
              ) : stacks.isError ? (
                <ErrorText error={stacks.error} />
              ) : !stacks.data ? (
                <Loading />
              ) : stackIds.length === 0 ? (
                <p className="muted small">No stacks yet.</p>
              ) : (
                <div className="stack-picks" role="group" aria-label={drill ? "Stacks to drill" : "Stacks to back up"}>
                  {stackIds.map((id) => (
                    <label key={id} className="check">
                      <input
                        type="checkbox"
                        checked={picked.has(id)}
                        onChange={(event) => {
                          const next = new Set(picked);
                          if (event.target.checked) next.add(id);
                          else next.delete(id);
                          setPicked(next);
                        }}
                      />
                      <span>{id}</span>
                    </label>
                  ))}
                </div>
              ))}
          </fieldset>
        )}

        <fieldset>
          <legend>Timetable</legend>
          <Field label="Runs">
            <select
              value={choice}
              onChange={(event) => {
                const next = event.target.value as TimetableChoice;
                if (next === "custom" && choice !== "custom") setCustom(PRESETS[choice].cron);
                setChoice(next);
              }}
            >
              {(Object.keys(PRESETS) as Preset[]).map((preset) => (
                <option key={preset} value={preset}>
                  {PRESETS[preset].label}
                </option>
              ))}
              <option value="custom">Custom (cron expression)</option>
            </select>
          </Field>
          {choice === "custom" && (
            <Field label="Cron expression (minute hour day month weekday)">
              <input
                required
                maxLength={100}
                spellCheck={false}
                className="mono"
                placeholder="30 2 * * 1-5"
                value={custom}
                onChange={(e) => setCustom(e.target.value)}
              />
            </Field>
          )}
          <Field label="Time zone">
            <input
              required
              maxLength={64}
              list={zones.length ? zonesId : undefined}
              spellCheck={false}
              value={timezone}
              onChange={(e) => setTimezone(e.target.value)}
            />
          </Field>
          {zoneList}
          <NextRuns cron={cron} timezone={timezone} />
        </fieldset>

        {!prune && (
          <>
            <Field label={drill ? "Take the latest backup from" : "Destination"}>
              <select
                value={destinationId ?? ""}
                onChange={(e) => setDestinationId(e.target.value ? Number(e.target.value) : null)}
              >
                <option value="">{drill ? `${here}'s archives` : `${here} only`}</option>
                {(destinations.data ?? []).map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.name} ({typeTag(d.settings)})
                  </option>
                ))}
                {destinationId !== null && destinations.data && !destinations.data.some((d) => d.id === destinationId) && (
                  <option value={destinationId}>Destination #{destinationId} (gone)</option>
                )}
              </select>
            </Field>
            {destinations.isError && <ErrorText error={destinations.error} />}
          </>
        )}

        {prune ? (
          <fieldset>
            <legend>What it takes</legend>
            <PruneOptionsFields name="schedule-prune" value={pruneOptions} onChange={setPruneOptions} />
          </fieldset>
        ) : drill ? (
          <>
            <NumberField label="Settle time (seconds)" min={0} max={3600} value={settle} onChange={setSettle} />
            <p className="muted small">
              How long the clone's services without a health check must keep running; those with one must be healthy.
            </p>
          </>
        ) : (
          <>
            <label className="check">
              <input type="checkbox" checked={includeBinds} onChange={(e) => setIncludeBinds(e.target.checked)} />
              <span>Include bind folders (besides each stack's folder and its named volumes)</span>
            </label>

            <fieldset>
              <legend>Retention</legend>
              <p className="muted small">
                Retention applies per stack, here and at the destination, only to archives Stackyard named, and never removes
                the newest.
              </p>
              <div className="retention">
                <NumberField label="Keep the newest" min={1} value={keep.last} onChange={(last) => setKeep({ ...keep, last })} />
                <NumberField label="And one a day for (days)" min={0} value={keep.daily} onChange={(daily) => setKeep({ ...keep, daily })} />
                <NumberField label="And one a week for (weeks)" min={0} value={keep.weekly} onChange={(weekly) => setKeep({ ...keep, weekly })} />
                <NumberField
                  label="And one a month for (months)"
                  min={0}
                  value={keep.monthly}
                  onChange={(monthly) => setKeep({ ...keep, monthly })}
                />
              </div>
            </fieldset>
          </>
        )}

        <label className="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          <span>Enabled (runs on its timetable)</span>
        </label>

        {save.isError && <ErrorText error={save.error} />}
        <FormActions
          label={editing ? "Save changes" : "Add the schedule"}
          busyLabel="Saving…"
          busy={save.isPending}
          disabled={prune ? diskUnavailable !== null : !everyStack && picked.size === 0}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}
