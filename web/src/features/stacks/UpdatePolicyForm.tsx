import { useId, useState, type FormEvent, type ReactNode } from "react";
import type { UpdatePolicy } from "../../api/types";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { NextRuns } from "../schedules/NextRuns";
import {
  fromDraft,
  MODE_LABEL,
  POLICY_BOUNDS,
  sameDraft,
  toDraft,
  TRACK_LABEL,
  type PolicyDraft,
} from "./policy";

/** What the form needs of a save mutation (a TanStack Query `useMutation` result fits). */
export interface PolicySave {
  mutate: (policy: UpdatePolicy, options?: { onSuccess?: () => void }) => void;
  reset: () => void;
  isPending: boolean;
  isSuccess: boolean;
  error: Error | null;
}

/** The time zones the browser knows, offered as suggestions (any zone the server knows is accepted). */
function timeZones(): string[] {
  try {
    return Intl.supportedValuesOf("timeZone");
  } catch {
    return [];
  }
}

type NumberKey = keyof typeof POLICY_BOUNDS;

/**
 * An update policy's editor: the mode, what counts as an update, the health gate, the
 * cooldown and the maintenance window. Starts from `policy` (the one in force) and follows
 * it while the user has changed nothing; the server checks what is sent and its refusal
 * (`detail`) is shown. `children`: further buttons beside Save.
 */
export function UpdatePolicyForm({
  label,
  policy,
  save,
  saveLabel,
  savedText,
  children,
}: {
  label: string;
  policy: UpdatePolicy;
  save: PolicySave;
  saveLabel: string;
  savedText: string;
  children?: ReactNode;
}) {
  const [draft, setDraft] = useState<PolicyDraft>(() => toDraft(policy));
  // The policy the draft was made from: when the server's changes (saved here, or by
  // someone else) and the user has not edited, the form shows the new one.
  const [base, setBase] = useState<PolicyDraft>(() => toDraft(policy));
  // Saved: show the policy as the server holds it (it may have put it in its own words,
  // "daily" as "0 3 * * *"); the summary was read again before the save counts as done.
  const [adopt, setAdopt] = useState(false);
  const current = toDraft(policy);
  if (adopt) {
    setAdopt(false);
    setBase(current);
    setDraft(current);
  } else if (!sameDraft(base, current)) {
    setBase(current);
    if (sameDraft(draft, base)) setDraft(current);
  }
  const zonesId = useId();
  const [zones] = useState(timeZones);

  function change<K extends keyof PolicyDraft>(key: K, value: PolicyDraft[K]) {
    if (save.isSuccess || save.error) save.reset();
    setDraft((d) => ({ ...d, [key]: value }));
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    save.mutate(fromDraft(draft), { onSuccess: () => setAdopt(true) });
  }

  function numberField(key: NumberKey, text: string) {
    const { min, max } = POLICY_BOUNDS[key];
    return (
      <Field label={text}>
        <input
          type="number"
          required
          min={min}
          max={max}
          step={1}
          value={draft[key]}
          onChange={(e) => change(key, e.target.value)}
        />
      </Field>
    );
  }

  return (
    <form className="form policy-form" aria-label={label} onSubmit={onSubmit}>
      <Field label="Mode">
        <select value={draft.mode} onChange={(e) => change("mode", e.target.value as PolicyDraft["mode"])}>
          {Object.entries(MODE_LABEL).map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </select>
      </Field>
      <Field label="What counts as an update">
        <select value={draft.track} onChange={(e) => change("track", e.target.value as PolicyDraft["track"])}>
          {Object.entries(TRACK_LABEL).map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </select>
      </Field>
      <label className="check policy-check">
        <input
          type="checkbox"
          checked={draft.prereleases}
          onChange={(e) => change("prereleases", e.target.checked)}
        />
        <span>Pre-releases count</span>
      </label>
      {numberField("health_timeout", "Health gate timeout (seconds)")}
      {numberField("settle", "Settle time (seconds)")}
      {numberField("cooldown_hours", "Cooldown (hours)")}
      <Field label="Maintenance window (cron)">
        <input
          value={draft.window}
          maxLength={100}
          placeholder="Any time, or e.g. 0 3 * * *"
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => change("window", e.target.value)}
        />
      </Field>
      {numberField("window_minutes", "Window length (minutes)")}
      <Field label="Time zone">
        <input
          required
          value={draft.timezone}
          maxLength={64}
          list={zones.length ? zonesId : undefined}
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => change("timezone", e.target.value)}
        />
      </Field>
      {zones.length > 0 && (
        <datalist id={zonesId}>
          {zones.map((zone) => (
            <option key={zone} value={zone} />
          ))}
        </datalist>
      )}
      <NextRuns
        cron={draft.window}
        timezone={draft.timezone}
        title="Next maintenance windows"
        minutes={Number(draft.window_minutes) || undefined}
        blank="No window: the auto-update applies an update at any time."
      />
      <p className="muted small policy-hint">
        The health gate: an updated service must be healthy (or, without a healthcheck, run the settle time without a
        restart) within the timeout, or the update is rolled back. The cooldown and the window apply to the
        auto-update only: a cron expression (or hourly, daily, weekly, monthly) for each window&rsquo;s start.
      </p>
      <div className="actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : saveLabel}
        </button>
        {children}
      </div>
      {save.error && <ErrorText error={save.error} />}
      {save.isSuccess && (
        <p className="success" role="status">
          {savedText}
        </p>
      )}
    </form>
  );
}
