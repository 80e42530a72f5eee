import { useRef, useState, type FormEvent } from "react";
import type {
  Destination,
  DestinationSecrets,
  DestinationSettings,
  DestinationTestResult,
  NfsSettings,
  RepositorySettings,
  S3Settings,
} from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { FormActions } from "../../components/FormActions";
import {
  locationWhere,
  PLAIN_TYPES,
  SECRETS_OF,
  secretsOf,
  TYPE_LABELS,
  type PlainType,
  type SecretName,
} from "./destinationTypes";
import { NEW_NFS, NfsForm } from "./NfsForm";
import { useCreateDestination, useTestUnsavedDestination, useUpdateDestination } from "./queries";
import { NEW_S3, S3Form, s3Settings } from "./S3Form";
import { SecretFields } from "./SecretFields";
import { NEW_SFTP, sftpDraft, SftpForm, sftpSettings, type SftpDraft } from "./SftpForm";

/** The settings of each type as typed: switching the type keeps what was typed for the others. */
interface Draft {
  type: PlainType;
  sftp: SftpDraft;
  s3: S3Settings;
  nfs: NfsSettings;
}

function draftOf(destination: Destination | null): Draft {
  const settings = destination?.settings;
  return {
    type: settings && settings.type !== "repository" ? settings.type : "sftp",
    sftp: settings?.type === "sftp" ? sftpDraft(settings) : NEW_SFTP,
    s3: settings?.type === "s3" ? settings : NEW_S3,
    nfs: settings?.type === "nfs" ? settings : NEW_NFS,
  };
}

function settingsOf(draft: Draft): Exclude<DestinationSettings, RepositorySettings> {
  switch (draft.type) {
    case "sftp":
      return sftpSettings(draft.sftp);
    case "s3":
      return s3Settings(draft.s3);
    case "nfs":
      return draft.nfs;
  }
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
 * Add a destination (`destination` null) or edit one: its name, its type (when adding) and
 * that type's form (`SftpForm`, `S3Form`, `NfsForm`), its secrets. Secrets are write-only:
 * stored ones show as "stored — leave empty to keep". A new destination's settings can be
 * tried first ("Test"): for SFTP the server's host key is shown, and saving pins that very key.
 *
 * A repository (made by `RepositoryDialog`) is edited here too, but only its name and its
 * location's secrets: its location stays (its data and keys are there; one moved elsewhere is
 * recovered there with its recovery key), and its pinned host key stays (a repository pins
 * its server's key when it is made, not by a test).
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
  const [removed, setRemoved] = useState<ReadonlySet<SecretName>>(new Set());
  const [forgetKey, setForgetKey] = useState(false);
  const repository = destination?.settings.type === "repository" ? destination.settings : null;
  const secretNames = repository ? secretsOf(repository) : SECRETS_OF[draft.type];

  /** A change to what the test tried makes its result (and the key it showed) stale. */
  function change(next: (draft: Draft) => Draft) {
    setDraft(next);
    test.reset();
  }

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
    const sent = secretsToSend();
    const secretsChange = Object.keys(sent).length ? { secrets: sent } : {};
    if (destination && repository) {
      // Its settings are left out: the server keeps them as they are.
      update.mutate({ id: destination.id, change: { name: name.trim(), ...secretsChange } }, { onSuccess: onSaved });
      return;
    }
    const settings = settingsOf(draft);
    if (destination) {
      update.mutate(
        {
          id: destination.id,
          change: { name: name.trim(), settings, ...secretsChange, ...(forgetKey ? { host_key: null } : {}) },
        },
        { onSuccess: onSaved },
      );
    } else {
      // The key the test showed for these very settings is the key pinned.
      const hostKey = settings.type === "sftp" ? (test.data?.host_key ?? null) : null;
      create.mutate({ name: name.trim(), settings, secrets: sent, host_key: hostKey }, { onSuccess: onSaved });
    }
  }

  const title = editing ? `Edit ${destination.name}` : "Add a destination";
  return (
    <Dialog title={title} onClose={onClose} className="form-dialog">
      <form ref={form} className="form" onSubmit={submit} aria-label={title}>
        <Field label="Name">
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        {repository ? (
          <>
            <p>
              Type: <strong>{TYPE_LABELS.repository}</strong>
            </p>
            <p>
              Location: <code>{locationWhere(repository.location)}</code>
            </p>
            <p className="muted small">
              The location is not changed here. A repository moved elsewhere is added again with “Recover from a
              repository” and its recovery key.
            </p>
          </>
        ) : editing ? (
          <p>
            Type: <strong>{TYPE_LABELS[draft.type]}</strong>
          </p>
        ) : (
          <Field label="Type">
            <select value={draft.type} onChange={(e) => change((d) => ({ ...d, type: e.target.value as PlainType }))}>
              {PLAIN_TYPES.map((type) => (
                <option key={type} value={type}>
                  {TYPE_LABELS[type]}
                </option>
              ))}
            </select>
          </Field>
        )}
        {!repository && draft.type === "sftp" && (
          <SftpForm draft={draft.sftp} onChange={(patch) => change((d) => ({ ...d, sftp: { ...d.sftp, ...patch } }))} />
        )}
        {!repository && draft.type === "s3" && (
          <S3Form draft={draft.s3} onChange={(patch) => change((d) => ({ ...d, s3: { ...d.s3, ...patch } }))} />
        )}
        {!repository && draft.type === "nfs" && (
          <NfsForm draft={draft.nfs} onChange={(patch) => change((d) => ({ ...d, nfs: { ...d.nfs, ...patch } }))} />
        )}
        <SecretFields
          names={secretNames}
          values={secrets}
          stored={new Set(destination?.secrets_set ?? [])}
          removed={removed}
          onChange={(key, value) => {
            setSecrets((s) => ({ ...s, [key]: value }));
            test.reset();
          }}
          onRemove={(key, on) => {
            const next = new Set(removed);
            if (on) next.add(key);
            else next.delete(key);
            setRemoved(next);
          }}
        />
        {editing && !repository && draft.type === "sftp" && destination.host_key_fingerprint && (
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
