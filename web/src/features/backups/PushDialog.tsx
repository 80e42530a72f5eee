import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link } from "react-router";
import type { ArchiveInfo, Destination, Run } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { formatBytes } from "../../components/format";
import { Loading } from "../../components/Loading";
import { typeTag } from "../destinations/destinationTypes";
import { destinationsQueryOptions, usePushBackup } from "../destinations/queries";
import { FormActions } from "../../components/FormActions";

/**
 * Send an archive of the page's host to a destination; the upload is a run of its stack (for
 * an agent's archive, the central's transfer: the page follows it).
 */
export function PushDialog({
  archive,
  onClose,
  onStarted,
}: {
  archive: ArchiveInfo;
  onClose: () => void;
  onStarted: (run: Run, destination: Destination) => void;
}) {
  const destinations = useQuery(destinationsQueryOptions());
  const push = usePushBackup();
  const [chosen, setChosen] = useState<number | null>(null);
  const list = destinations.data ?? [];
  const destination = list.find((d) => d.id === chosen) ?? list[0] ?? null;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!destination) return;
    push.mutate(
      { name: archive.name, destinationId: destination.id },
      { onSuccess: (run) => onStarted(run, destination) },
    );
  }

  const title = `Push ${archive.name}`;
  return (
    <Dialog title={title} onClose={onClose}>
      {destinations.isError ? (
        <ErrorText error={destinations.error} />
      ) : !destinations.data ? (
        <Loading />
      ) : list.length === 0 ? (
        <>
          <p>
            No destinations yet: add one on the <Link to="/destinations">Destinations</Link> page.
          </p>
          <div className="actions dialog-actions">
            <button type="button" onClick={onClose}>
              Close
            </button>
          </div>
        </>
      ) : (
        <form className="form" onSubmit={submit} aria-label={title}>
          <p>
            A copy of the archive ({formatBytes(archive.size)}) is uploaded to the destination; the one here stays.
          </p>
          <Field label="Destination">
            <select
              value={destination?.id ?? ""}
              onChange={(event) => {
                setChosen(Number(event.target.value));
                push.reset();
              }}
            >
              {list.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name} ({typeTag(d.settings)})
                </option>
              ))}
            </select>
          </Field>
          {push.isError && <ErrorText error={push.error} />}
          <FormActions label="Push" busyLabel="Starting…" busy={push.isPending} onCancel={onClose} />
        </form>
      )}
    </Dialog>
  );
}
