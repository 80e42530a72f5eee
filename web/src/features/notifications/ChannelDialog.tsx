import { useRef, useState, type FormEvent } from "react";
import type { Channel, ChannelKind, ChannelTestResult, NotificationCatalogue } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { FormActions } from "../../components/FormActions";
import { initialValues, secretsOf, settingsOf, unchanged, type Values } from "./channelDraft";
import { ChannelFields } from "./ChannelFields";
import { useCreateChannel, useTestChannelForm, useUpdateChannel } from "./queries";

/** How a test went: the service's own answer. */
function TestOutcome({ result }: { result: ChannelTestResult }) {
  return (
    <div className={result.ok ? "success" : "error"} role="status">
      <p>
        {result.ok ? "Test passed" : "Test failed"}: {result.detail}
      </p>
    </div>
  );
}

/**
 * Add a channel (`channel` null) or edit one: its name, its kind (when adding) and that
 * kind's fields as the catalogue describes them, whether it is enabled. Secrets are
 * write-only: stored ones show as "stored — leave empty to keep". "Send test" tries the
 * form's values before they are saved (the saved channel itself when nothing was changed).
 */
export function ChannelDialog({
  channel,
  catalogue,
  onClose,
  onSaved,
}: {
  channel: Channel | null;
  catalogue: NotificationCatalogue;
  onClose: () => void;
  onSaved: (saved: Channel) => void;
}) {
  const kinds = catalogue.channels;
  const create = useCreateChannel();
  const update = useUpdateChannel();
  const test = useTestChannelForm();
  const save = channel ? update : create;
  const form = useRef<HTMLFormElement>(null);
  const [name, setName] = useState(channel?.name ?? "");
  const [kind, setKind] = useState<ChannelKind | undefined>(channel?.kind ?? kinds[0]?.kind);
  // Each kind's values as typed: switching the kind keeps what was typed for the others.
  const [drafts, setDrafts] = useState<Partial<Record<ChannelKind, Values>>>({});
  const [removed, setRemoved] = useState<ReadonlySet<string>>(new Set());
  const [enabled, setEnabled] = useState(channel?.enabled ?? true);
  const spec = kinds.find((k) => k.kind === kind);
  const values = (kind && drafts[kind]) ?? (spec ? initialValues(spec, channel) : {});
  const stored = new Set(channel?.secrets_set ?? []);

  /** A change to what the test tried makes its result stale. */
  function change(next: Values) {
    if (kind) setDrafts((d) => ({ ...d, [kind]: next }));
    test.reset();
  }

  function runTest() {
    if (!spec || !form.current?.reportValidity()) return;
    if (channel && unchanged(spec, values, removed, channel)) {
      test.mutate({ saved: channel.id });
    } else if (channel) {
      // The stored secrets left out are the server's to fill in (never sent back here).
      const secrets = secretsOf(spec, values, removed);
      test.mutate({ kind: spec.kind, name, settings: settingsOf(spec, values), secrets, channel_id: channel.id });
    } else {
      test.mutate({ kind: spec.kind, name, settings: settingsOf(spec, values), secrets: secretsOf(spec, values) });
    }
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!spec) return;
    const settings = settingsOf(spec, values);
    if (channel) {
      const secrets = secretsOf(spec, values, removed);
      const change = { name: name.trim(), settings, enabled, ...(Object.keys(secrets).length ? { secrets } : {}) };
      update.mutate({ id: channel.id, change }, { onSuccess: onSaved });
    } else {
      create.mutate(
        { name: name.trim(), kind: spec.kind, settings, secrets: secretsOf(spec, values), enabled },
        { onSuccess: onSaved },
      );
    }
  }

  const title = channel ? `Edit ${channel.name}` : "Add a channel";
  return (
    <Dialog title={title} onClose={onClose} className="form-dialog">
      <form ref={form} className="form" onSubmit={submit} aria-label={title}>
        <Field label="Name">
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        {channel ? (
          <p>
            Kind: <strong>{spec?.label ?? channel.kind}</strong>
          </p>
        ) : (
          <Field label="Kind">
            <select
              value={kind}
              onChange={(e) => {
                setKind(e.target.value as ChannelKind);
                test.reset();
              }}
            >
              {kinds.map((k) => (
                <option key={k.kind} value={k.kind}>
                  {k.label}
                </option>
              ))}
            </select>
          </Field>
        )}
        {spec ? (
          <fieldset>
            <legend>
              {spec.label} settings <span className="muted small">(* required)</span>
            </legend>
            <ChannelFields
              fields={spec.fields}
              values={values}
              stored={stored}
              removed={removed}
              onChange={(field, value) => change({ ...values, [field]: value })}
              onRemove={(field, on) => {
                const next = new Set(removed);
                if (on) next.add(field);
                else next.delete(field);
                setRemoved(next);
                test.reset();
              }}
            />
          </fieldset>
        ) : (
          <p className="error">This server does not know the kind {channel?.kind}.</p>
        )}
        <label className="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          <span>Enabled (sends what the rules pick for it)</span>
        </label>
        {test.data && <TestOutcome result={test.data} />}
        {test.isError && <ErrorText error={test.error} />}
        {save.isError && <ErrorText error={save.error} />}
        <FormActions
          label={channel ? "Save changes" : "Add the channel"}
          busyLabel="Saving…"
          busy={save.isPending}
          disabled={!spec}
          onCancel={onClose}
        >
          <button type="button" onClick={runTest} disabled={test.isPending || !spec}>
            {test.isPending ? "Sending…" : "Send test"}
          </button>
        </FormActions>
      </form>
    </Dialog>
  );
}
