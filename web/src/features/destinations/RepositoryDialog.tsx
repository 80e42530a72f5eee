import { useState, type FormEvent } from "react";
import type { Destination, DestinationSecrets } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { FormActions } from "../../components/FormActions";
import { LOCATION_SECRETS, recoveryKeyOf, type SecretName } from "./destinationTypes";
import { LocationForm, locationOf, NEW_LOCATION, type LocationDraft } from "./LocationForm";
import { useCreateRepository } from "./queries";
import { RecoveryKeyDialog } from "./RecoveryKeyDialog";
import { SecretFields } from "./SecretFields";
import "./destinations.css";

const NOTHING_STORED: ReadonlySet<SecretName> = new Set();

/**
 * "New repository" (`recover` false): a restic repository made at a location (a folder, SFTP,
 * S3) as a destination; its recovery key is shown once, and the dialog stays until the user
 * says they have written it down (Escape does nothing until then). "Recover from a
 * repository" (`recover` true): the same location and its recovery key open a repository
 * made before (on a fresh install: every backup in it); a wrong key is the server's answer.
 */
export function RepositoryDialog({
  recover,
  onClose,
  onDone,
}: {
  recover: boolean;
  onClose: () => void;
  /** Made (its key written down) or recovered. */
  onDone: (destination: Destination) => void;
}) {
  const create = useCreateRepository();
  const [name, setName] = useState("");
  const [location, setLocation] = useState<LocationDraft>(NEW_LOCATION);
  const [secrets, setSecrets] = useState<Partial<Record<SecretName, string>>>({});
  const [recoveryKey, setRecoveryKey] = useState("");
  // The recovery key of the repository just made, on screen until the user closes it.
  const [shown, setShown] = useState<{ destination: Destination; key: string; keyId: string | null } | null>(null);
  const secretNames = LOCATION_SECRETS[location.type];

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const sent: DestinationSecrets = {};
    for (const key of secretNames) if (secrets[key]) sent[key] = secrets[key];
    create.mutate(
      {
        name: name.trim(),
        settings: { type: "repository", location: locationOf(location) },
        secrets: sent,
        recovery_key: recover ? recoveryKeyOf(recoveryKey) : null,
      },
      {
        onSuccess: (made) => {
          const key = made.recovery_key;
          if (key) setShown({ destination: made.destination, key, keyId: made.recovery_key_id });
          else onDone(made.destination);
        },
      },
    );
  }

  const title = recover ? "Recover from a repository" : "New repository";
  // Not while the repository is being made: its answer (the recovery key) would be lost.
  const cancel = () => {
    if (!create.isPending) onClose();
  };
  if (shown) {
    // Its own dialog, mounted afresh: the focus goes into it.
    return (
      <RecoveryKeyDialog
        name={shown.destination.name}
        recoveryKey={shown.key}
        keyId={shown.keyId}
        onClose={() => onDone(shown.destination)}
      />
    );
  }
  return (
    <Dialog title={title} onClose={cancel} className="form-dialog">
      <form className="form" onSubmit={submit} aria-label={title}>
        {recover ? (
          <p className="muted">
            A repository made before, here or by another install: its location and its recovery key open every backup
            in it, of every instance and stack. This instance adds a key of its own to it.
          </p>
        ) : (
          <p className="muted">
            Backups pushed to a repository are kept deduplicated, compressed and encrypted, in restic's format (restic
            itself opens it too). It is opened by this instance's own key and by a recovery key shown once, next.
          </p>
        )}
        <Field label="Name">
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <LocationForm draft={location} onChange={(next) => setLocation(next)} />
        <SecretFields
          names={secretNames}
          values={secrets}
          stored={NOTHING_STORED}
          removed={NOTHING_STORED}
          onChange={(key, value) => setSecrets((s) => ({ ...s, [key]: value }))}
          onRemove={() => {}}
        />
        {recover && (
          <Field label="Recovery key">
            <input
              required
              maxLength={1024}
              className="mono"
              autoComplete="off"
              spellCheck={false}
              placeholder="XXXX-XXXX-XXXX-…"
              value={recoveryKey}
              onChange={(e) => setRecoveryKey(e.target.value)}
            />
          </Field>
        )}
        {create.isError && <ErrorText error={create.error} />}
        <FormActions
          label={recover ? "Recover the repository" : "Make the repository"}
          busyLabel={recover ? "Opening the repository…" : "Making the repository…"}
          busy={create.isPending}
          onCancel={cancel}
        />
      </form>
    </Dialog>
  );
}
