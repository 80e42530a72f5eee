import { useId, useRef, useState, type FormEvent, type ReactNode } from "react";
import type {
  Destination,
  DestinationSecrets,
  DestinationSettings,
  DestinationTestResult,
  DestinationType,
  NfsSettings,
  S3Settings,
  SftpSettings,
} from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { useCreateDestination, useTestUnsavedDestination, useUpdateDestination } from "./queries";
import { FormActions } from "../../components/FormActions";

export type SecretName = keyof DestinationSecrets;

export const TYPE_LABELS: Record<DestinationType, string> = {
  sftp: "SFTP",
  s3: "S3-compatible object storage",
  nfs: "NFS export",
};

/** The secrets each type signs in with (the server ignores the others). */
export const SECRETS_OF: Record<DestinationType, readonly SecretName[]> = {
  sftp: ["password", "private_key", "passphrase"],
  s3: ["secret_key"],
  nfs: [],
};

const SECRET_LABELS: Record<SecretName, string> = {
  password: "Password",
  private_key: "Private key",
  passphrase: "Key passphrase",
  secret_key: "Secret key",
};

const SECRET_HINTS: Partial<Record<SecretName, string>> = {
  private_key: "OpenSSH or PEM format. A password or a private key is needed.",
  passphrase: "Only when the private key is encrypted.",
};

/** Where a destination keeps the archives, in one line. */
export function whereOf(settings: DestinationSettings): string {
  switch (settings.type) {
    case "sftp":
      return `${settings.username}@${settings.host}${settings.port === 22 ? "" : `:${settings.port}`}:${settings.folder || "~"}`;
    case "s3":
      return `${settings.bucket}${settings.prefix ? `/${settings.prefix}` : ""} at ${settings.endpoint_url}`;
    case "nfs":
      return `${settings.server}:${settings.export}${settings.subdirectory ? `/${settings.subdirectory}` : ""}`;
  }
}

const EMPTY_SFTP: SftpSettings = { type: "sftp", host: "", port: 22, username: "", folder: "" };
const EMPTY_S3: S3Settings = {
  type: "s3",
  endpoint_url: "",
  region: "us-east-1",
  bucket: "",
  prefix: "",
  access_key: "",
  path_style: true,
};
const EMPTY_NFS: NfsSettings = { type: "nfs", server: "", export: "", options: "rw", subdirectory: "" };

interface Draft {
  type: DestinationType;
  sftp: SftpSettings;
  /** The port as typed (a number once sent). */
  port: string;
  s3: S3Settings;
  nfs: NfsSettings;
}

function draftOf(destination: Destination | null): Draft {
  const settings = destination?.settings;
  return {
    type: settings?.type ?? "sftp",
    sftp: settings?.type === "sftp" ? settings : EMPTY_SFTP,
    port: String(settings?.type === "sftp" ? settings.port : 22),
    s3: settings?.type === "s3" ? settings : EMPTY_S3,
    nfs: settings?.type === "nfs" ? settings : EMPTY_NFS,
  };
}

function settingsOf(draft: Draft): DestinationSettings {
  switch (draft.type) {
    case "sftp":
      return { ...draft.sftp, host: draft.sftp.host.trim(), port: Number(draft.port) };
    case "s3":
      return { ...draft.s3, endpoint_url: draft.s3.endpoint_url.trim(), bucket: draft.s3.bucket.trim() };
    case "nfs":
      return draft.nfs;
  }
}

/** A write-only secret: a stored one is never shown, only said to be there. */
function SecretField({
  name,
  value,
  stored,
  removed,
  onChange,
  onRemove,
}: {
  name: SecretName;
  value: string;
  stored: boolean;
  removed: boolean;
  onChange: (value: string) => void;
  onRemove: (removed: boolean) => void;
}) {
  const hintId = useId();
  const hint = SECRET_HINTS[name];
  const common = {
    value: removed ? "" : value,
    disabled: removed,
    placeholder: stored ? "stored — leave empty to keep" : undefined,
    autoComplete: "off",
    spellCheck: false,
    "aria-describedby": hint ? hintId : undefined,
  };
  return (
    <div className="secret-field">
      <Field label={SECRET_LABELS[name]}>
        {name === "private_key" ? (
          <textarea
            {...common}
            rows={4}
            maxLength={32768}
            className="mono"
            onChange={(event) => onChange(event.target.value)}
          />
        ) : (
          <input {...common} type="password" maxLength={1024} onChange={(event) => onChange(event.target.value)} />
        )}
      </Field>
      {hint && (
        <p className="muted small" id={hintId}>
          {hint}
        </p>
      )}
      {stored && (
        <label className="check">
          <input type="checkbox" checked={removed} onChange={(event) => onRemove(event.target.checked)} />
          <span>Remove the stored {SECRET_LABELS[name].toLowerCase()}</span>
        </label>
      )}
    </div>
  );
}

function TestResult({ result, saving }: { result: DestinationTestResult; saving: boolean }) {
  return (
    <div className={result.ok ? "success" : "error"} role="status">
      <p>
        {result.ok ? "Test passed" : "Test failed"}: {result.detail}
      </p>
      {result.host_key_fingerprint && (
        <p className="fingerprint">
          Server's host key: <code>{result.host_key_fingerprint}</code>
          {saving && " — saving pins this key."}
        </p>
      )}
    </div>
  );
}

/**
 * Add a destination (`destination` null) or edit one. Secrets are write-only: stored ones
 * show as "stored — leave empty to keep". A new destination's settings can be tried first
 * ("Test"): for SFTP the server's host key is shown, and saving pins that very key.
 */
export function DestinationDialog({
  destination,
  onClose,
  onSaved,
}: {
  destination: Destination | null;
  onClose: () => void;
  onSaved: (saved: Destination) => void;
}) {
  const editing = destination !== null;
  const create = useCreateDestination();
  const update = useUpdateDestination();
  const test = useTestUnsavedDestination();
  const save = editing ? update : create;
  const form = useRef<HTMLFormElement>(null);
  const [name, setName] = useState(destination?.name ?? "");
  const [draft, setDraft] = useState<Draft>(() => draftOf(destination));
  const [secrets, setSecrets] = useState<Partial<Record<SecretName, string>>>({});
  const [removed, setRemoved] = useState<Set<SecretName>>(new Set());
  const [forgetKey, setForgetKey] = useState(false);
  const stored = new Set(destination?.secrets_set ?? []);
  const secretNames = SECRETS_OF[draft.type];

  /** A change to what the test tried makes its result (and the key it showed) stale. */
  function change(next: (draft: Draft) => Draft) {
    setDraft(next);
    test.reset();
  }
  const setSftp = (patch: Partial<SftpSettings>) => change((d) => ({ ...d, sftp: { ...d.sftp, ...patch } }));
  const setS3 = (patch: Partial<S3Settings>) => change((d) => ({ ...d, s3: { ...d.s3, ...patch } }));
  const setNfs = (patch: Partial<NfsSettings>) => change((d) => ({ ...d, nfs: { ...d.nfs, ...patch } }));

  /** The secrets to send: those typed; on an edit, "" for each to remove (left out: kept). */
  function secretsToSend(): DestinationSecrets {
    const out: DestinationSecrets = {};
    for (const key of secretNames) {
      if (removed.has(key)) out[key] = "";
      else if (secrets[key]) out[key] = secrets[key];
    }
    return out;
  }

  function runTest() {
    if (!form.current?.reportValidity()) return;
    test.mutate({ settings: settingsOf(draft), secrets: secretsToSend() });
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const settings = settingsOf(draft);
    const sent = secretsToSend();
    if (destination) {
      update.mutate(
        {
          id: destination.id,
          change: {
            name: name.trim(),
            settings,
            ...(Object.keys(sent).length ? { secrets: sent } : {}),
            ...(forgetKey ? { host_key: null } : {}),
          },
        },
        { onSuccess: onSaved },
      );
    } else {
      // The key the test showed for these very settings is the key pinned.
      const hostKey = settings.type === "sftp" ? (test.data?.host_key ?? null) : null;
      create.mutate({ name: name.trim(), settings, secrets: sent, host_key: hostKey }, { onSuccess: onSaved });
    }
  }

  let fields: ReactNode;
  if (draft.type === "sftp") {
    fields = (
      <>
        <Field label="Host">
          <input required maxLength={253} autoComplete="off" value={draft.sftp.host} onChange={(e) => setSftp({ host: e.target.value })} />
        </Field>
        <Field label="Port">
          <input
            required
            type="number"
            min={1}
            max={65535}
            value={draft.port}
            onChange={(e) => change((d) => ({ ...d, port: e.target.value }))}
          />
        </Field>
        <Field label="Username">
          <input required maxLength={128} autoComplete="off" value={draft.sftp.username} onChange={(e) => setSftp({ username: e.target.value })} />
        </Field>
        <Field label="Folder">
          <input
            maxLength={1000}
            placeholder="backups (relative to the login folder unless it starts with /)"
            value={draft.sftp.folder}
            onChange={(e) => setSftp({ folder: e.target.value })}
          />
        </Field>
      </>
    );
  } else if (draft.type === "s3") {
    fields = (
      <>
        <Field label="Endpoint URL">
          <input
            required
            type="url"
            maxLength={500}
            placeholder="https://s3.eu-central-1.amazonaws.com"
            value={draft.s3.endpoint_url}
            onChange={(e) => setS3({ endpoint_url: e.target.value })}
          />
        </Field>
        <Field label="Region">
          <input maxLength={64} value={draft.s3.region} onChange={(e) => setS3({ region: e.target.value })} />
        </Field>
        <Field label="Bucket">
          <input required minLength={3} maxLength={63} value={draft.s3.bucket} onChange={(e) => setS3({ bucket: e.target.value })} />
        </Field>
        <Field label="Prefix (folder in the bucket)">
          <input maxLength={500} value={draft.s3.prefix} onChange={(e) => setS3({ prefix: e.target.value })} />
        </Field>
        <Field label="Access key">
          <input
            required
            maxLength={256}
            autoComplete="off"
            spellCheck={false}
            value={draft.s3.access_key}
            onChange={(e) => setS3({ access_key: e.target.value })}
          />
        </Field>
        <label className="check">
          <input type="checkbox" checked={draft.s3.path_style} onChange={(e) => setS3({ path_style: e.target.checked })} />
          <span>Path-style addressing (endpoint/bucket/key; most self-hosted services need it)</span>
        </label>
      </>
    );
  } else {
    fields = (
      <>
        <Field label="Server">
          <input required maxLength={253} value={draft.nfs.server} onChange={(e) => setNfs({ server: e.target.value })} />
        </Field>
        <Field label="Export">
          <input
            required
            maxLength={1000}
            placeholder="/srv/backups"
            value={draft.nfs.export}
            onChange={(e) => setNfs({ export: e.target.value })}
          />
        </Field>
        <Field label="Mount options">
          <input maxLength={500} value={draft.nfs.options} onChange={(e) => setNfs({ options: e.target.value })} />
        </Field>
        <Field label="Subdirectory">
          <input maxLength={500} value={draft.nfs.subdirectory} onChange={(e) => setNfs({ subdirectory: e.target.value })} />
        </Field>
        <p className="muted small">No sign-in secrets: the server trusts this host. An NFS export is tested once saved.</p>
      </>
    );
  }

  const title = editing ? `Edit ${destination.name}` : "Add a destination";
  return (
    <Dialog title={title} onClose={onClose} className="form-dialog">
      <form ref={form} className="form" onSubmit={submit} aria-label={title}>
        <Field label="Name">
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        {editing ? (
          <p>
            Type: <strong>{TYPE_LABELS[draft.type]}</strong>
          </p>
        ) : (
          <Field label="Type">
            <select value={draft.type} onChange={(e) => change((d) => ({ ...d, type: e.target.value as DestinationType }))}>
              {(Object.keys(TYPE_LABELS) as DestinationType[]).map((type) => (
                <option key={type} value={type}>
                  {TYPE_LABELS[type]}
                </option>
              ))}
            </select>
          </Field>
        )}
        {fields}
        {secretNames.length > 0 && (
          <fieldset>
            <legend>Sign-in secrets (write-only: never shown again)</legend>
            {secretNames.map((key) => (
              <SecretField
                key={key}
                name={key}
                value={secrets[key] ?? ""}
                stored={stored.has(key)}
                removed={removed.has(key)}
                onChange={(value) => {
                  setSecrets((s) => ({ ...s, [key]: value }));
                  test.reset();
                }}
                onRemove={(on) => {
                  const next = new Set(removed);
                  if (on) next.add(key);
                  else next.delete(key);
                  setRemoved(next);
                }}
              />
            ))}
          </fieldset>
        )}
        {editing && draft.type === "sftp" && destination.host_key_fingerprint && (
          <label className="check">
            <input type="checkbox" checked={forgetKey} onChange={(e) => setForgetKey(e.target.checked)} />
            <span>
              Forget the pinned host key (<code>{destination.host_key_fingerprint}</code>): the next successful test pins
              the key the server shows then. Only when the server's key was changed on purpose.
            </span>
          </label>
        )}
        {test.data && <TestResult result={test.data} saving={!editing} />}
        {test.isError && <ErrorText error={test.error} />}
        {save.isError && <ErrorText error={save.error} />}
        <FormActions
          label={editing ? "Save changes" : "Add the destination"}
          busyLabel="Saving…"
          busy={save.isPending}
          onCancel={onClose}
        >
          {!editing && (
            <button type="button" onClick={runTest} disabled={test.isPending || draft.type === "nfs"}>
              {test.isPending ? "Testing…" : "Test"}
            </button>
          )}
        </FormActions>
      </form>
    </Dialog>
  );
}
