import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError } from "../../api/errors";
import type { Destination, RemoteArchive, Run } from "../../api/types";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { ErrorBanner } from "../../components/ErrorBanner";
import { ErrorText } from "../../components/ErrorText";
import { formatBytes, formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { remoteArchivesQueryOptions, useDeleteRemoteArchive, usePullArchive } from "./queries";

const COLUMNS = ["Archive", "Size", "Modified"] as const;

/**
 * The archives Stackyard made that a destination holds: download one to this host (a
 * pull, followed as a run of its stack), restore one (pulled first), or delete one there.
 */
export function RemoteArchives({
  destination,
  onClose,
  onPulled,
  onAlreadyHere,
}: {
  destination: Destination;
  onClose: () => void;
  /** A pull started; `restore`: the user wants to restore the archive once it is here. */
  onPulled: (run: Run, name: string, restore: boolean) => void;
  /** "Restore…" of an archive this host holds already (the pull's 409): restore the local copy. */
  onAlreadyHere: (name: string) => Promise<boolean>;
}) {
  const archives = useQuery(remoteArchivesQueryOptions(destination.id));
  const pull = usePullArchive(destination.id);
  const remove = useDeleteRemoteArchive(destination.id);
  const [deleting, setDeleting] = useState<RemoteArchive | null>(null);
  const label = `Archives on ${destination.name}`;

  function start(name: string, restore: boolean) {
    pull.mutate(name, {
      onSuccess: (run) => onPulled(run, name, restore),
      onError: (error) => {
        // Here already: restoring needs no download.
        if (restore && error instanceof ApiError && error.status === 409) {
          void onAlreadyHere(name).then((here) => here && pull.reset());
        }
      },
    });
  }

  return (
    <section className="card" aria-label={label}>
      <div className="console-head">
        <h2>{label}</h2>
        <div className="actions">
          <button type="button" onClick={() => void archives.refetch()} disabled={archives.isFetching}>
            {archives.isFetching ? "Reading…" : "Refresh"}
          </button>
          <button type="button" className="link-button" aria-label={`Close ${label}`} onClick={onClose}>
            Close
          </button>
        </div>
      </div>
      {archives.isError ? (
        <ErrorBanner error={archives.error} onRetry={() => void archives.refetch()} />
      ) : !archives.data ? (
        <Loading label={`Reading the archives on ${destination.name}…`} />
      ) : archives.data.length === 0 ? (
        <p className="muted">No archives made by Stackyard on this destination.</p>
      ) : (
        <Table label={label} columns={COLUMNS} actions busy={archives.isFetching}>
          {archives.data.map((archive) => (
            <tr key={archive.name}>
              <th scope="row">
                <code>{archive.name}</code>
              </th>
              <td className="nowrap">{formatBytes(archive.size)}</td>
              <td className="nowrap">{formatDateTime(archive.modified)}</td>
              <RowActions>
                <button type="button" disabled={pull.isPending} onClick={() => start(archive.name, false)}>
                  Download to this host
                </button>
                <button type="button" disabled={pull.isPending} onClick={() => start(archive.name, true)}>
                  Restore…
                </button>
                <button
                  type="button"
                  className="danger"
                  aria-label={`Delete ${archive.name} from ${destination.name}`}
                  onClick={() => {
                    remove.reset();
                    setDeleting(archive);
                  }}
                >
                  Delete
                </button>
              </RowActions>
            </tr>
          ))}
        </Table>
      )}
      {pull.isError && <ErrorText error={pull.error} />}
      {deleting && (
        <ConfirmDelete
          title={`Delete ${deleting.name} from ${destination.name}?`}
          confirmLabel="Delete it there"
          remove={remove}
          variables={deleting.name}
          onCancel={() => setDeleting(null)}
          onDeleted={() => setDeleting(null)}
        >
          <p>
            The archive ({formatBytes(deleting.size)}) is removed from the destination for good. A copy on this host,
            if there is one, stays.
          </p>
        </ConfirmDelete>
      )}
    </section>
  );
}
