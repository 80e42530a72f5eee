import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import type { HostId } from "../../api/hosts";
import type { Destination, Run } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { formatBytes, formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { typeTag } from "../destinations/destinationTypes";
import { destinationsQueryOptions, remoteArchivesQueryOptions, usePullArchiveInto } from "../destinations/queries";

const COLUMNS = ["Archive", "Size", "Modified"] as const;

/** The archives on `destination`, each with a Pull button. */
function ArchivesOn({
  destination,
  busy,
  onPull,
}: {
  destination: Destination;
  busy: boolean;
  onPull: (name: string) => void;
}) {
  const archives = useQuery(remoteArchivesQueryOptions(destination.id));
  const label = `Archives on ${destination.name}`;
  if (archives.isError) return <ErrorText error={archives.error} />;
  if (!archives.data) return <Loading label={`Reading the archives on ${destination.name}…`} />;
  if (archives.data.length === 0) return <p className="muted">No archives made by Stackyard on {destination.name}.</p>;
  return (
    <Table label={label} columns={COLUMNS} actions busy={archives.isFetching}>
      {archives.data.map((archive) => (
        <tr key={archive.name}>
          <th scope="row">
            <code>{archive.name}</code>
          </th>
          <td className="nowrap">{formatBytes(archive.size)}</td>
          <td className="nowrap">{formatDateTime(archive.modified)}</td>
          <RowActions>
            <button type="button" aria-label={`Pull ${archive.name}`} disabled={busy} onClick={() => onPull(archive.name)}>
              Pull
            </button>
          </RowActions>
        </tr>
      ))}
    </Table>
  );
}

/**
 * Brings an archive from a destination into `host`'s archives (this host, or an agent through
 * the central): choose the destination, then the archive; the copy is a run of its stack.
 */
export function PullDialog({
  host,
  hostName,
  onClose,
  onStarted,
}: {
  host: HostId;
  /** "this host", or the agent's name. */
  hostName: string;
  onClose: () => void;
  onStarted: (run: Run, name: string, destination: Destination) => void;
}) {
  const destinations = useQuery(destinationsQueryOptions());
  const pull = usePullArchiveInto(host);
  const [chosen, setChosen] = useState<number | null>(null);
  const list = destinations.data ?? [];
  const destination = list.find((d) => d.id === chosen) ?? list[0] ?? null;

  return (
    <Dialog title={`Pull an archive into ${hostName}`} onClose={onClose} className="form-dialog">
      {destinations.isError ? (
        <ErrorText error={destinations.error} />
      ) : !destinations.data ? (
        <Loading />
      ) : !destination ? (
        <p>
          No destinations yet: add one on the <Link to="/destinations">Destinations</Link> page.
        </p>
      ) : (
        <>
          <p className="muted">
            A copy of the archive is downloaded into the archives of {hostName}; the one at the destination stays. Restore it
            from here once it has arrived.
          </p>
          <Field label="Destination">
            <select
              value={destination.id}
              onChange={(event) => {
                setChosen(Number(event.target.value));
                pull.reset();
              }}
            >
              {list.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name} ({typeTag(d.settings)})
                </option>
              ))}
            </select>
          </Field>
          <ArchivesOn
            key={destination.id}
            destination={destination}
            busy={pull.isPending}
            onPull={(name) =>
              pull.mutate({ destinationId: destination.id, name }, { onSuccess: (run) => onStarted(run, name, destination) })
            }
          />
          {pull.isError && <ErrorText error={pull.error} />}
        </>
      )}
      <div className="actions dialog-actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
