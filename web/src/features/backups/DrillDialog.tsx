import { useState, type FormEvent } from "react";
import type { ArchiveInfo, Run } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { FormActions } from "../../components/FormActions";
import { formatDateTime } from "../../components/format";
import { useDrillBackup } from "./queries";

/** How long a clone's services without a health check must keep running, by default (the server's). */
export const DEFAULT_SETTLE_SECONDS = 30;

/**
 * Start a restore drill of an archive: restored into a scratch clone (nothing of the
 * stack's own is touched), compared with the archive, started without network or
 * published ports, then removed. The drill is a run of the archive's stack.
 */
export function DrillDialog({
  archive,
  onClose,
  onStarted,
}: {
  archive: ArchiveInfo;
  onClose: () => void;
  onStarted: (run: Run) => void;
}) {
  const drill = useDrillBackup();
  const [settle, setSettle] = useState(DEFAULT_SETTLE_SECONDS);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    drill.mutate({ name: archive.name, settleSeconds: settle }, { onSuccess: (run) => onStarted(run) });
  }

  const title = `Restore drill of ${archive.name}`;
  return (
    <Dialog title={title} onClose={onClose}>
      <form className="form" onSubmit={submit} aria-label={title}>
        <p>
          Stack <code>{archive.stack_id}</code>, backed up {formatDateTime(archive.created_at)}. The archive is restored
          into a scratch clone, compared file by file with the archive, started without network or published ports,
          and removed. The stack itself and its data are not touched.
        </p>
        <Field label="Settle time (seconds)">
          <input
            type="number"
            required
            min={0}
            max={3600}
            value={Number.isNaN(settle) ? "" : settle}
            onChange={(event) => setSettle(event.target.valueAsNumber)}
          />
        </Field>
        <p className="muted small">
          How long the clone's services without a health check must keep running; those with one must be healthy.
        </p>
        {drill.isError && <ErrorText error={drill.error} />}
        <FormActions label="Start the drill" busyLabel="Starting…" busy={drill.isPending} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
