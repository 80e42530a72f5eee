import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import { errorMessage } from "../../api/errors";
import { LOCAL_HOST } from "../../api/hosts";
import type { ArchiveInfo, Destination, Run } from "../../api/types";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { useCan } from "../auth/permissions";
import { FollowedRun } from "../backups/FollowedRun";
import { backupsQueryOptions } from "../backups/queries";
import { RestoreDialog } from "../backups/RestoreDialog";
import { DestinationDialog } from "./DestinationDialog";
import { sftpOf, TYPE_LABELS, whereOf } from "./destinationTypes";
import { destinationsQueryOptions, invalidateAfterTransfer, useDeleteDestination, useTestDestination } from "./queries";
import { RemoteArchives } from "./RemoteArchives";
import { RepositoryDialog } from "./RepositoryDialog";
import { RepositoryUse } from "./RepositoryUse";

const COLUMNS = ["Name", "Type", "Where", "Host key"] as const;

/** The SFTP server's pinned key: a plain SFTP destination's, or a repository's kept there. */
function HostKey({ destination }: { destination: Destination }) {
  if (!sftpOf(destination.settings)) return <span className="muted">—</span>;
  if (!destination.host_key_fingerprint) {
    return <span className="muted small">Not pinned yet: the first successful test pins it</span>;
  }
  return (
    <span className="fingerprint">
      Host key pinned: <code>{destination.host_key_fingerprint}</code>
    </span>
  );
}

function DestinationRow({
  destination,
  onBrowse,
  onUse,
  onEdit,
  onDelete,
}: {
  destination: Destination;
  onBrowse: () => void;
  onUse: () => void;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const test = useTestDestination();
  return (
    <tr>
      <th scope="row">
        {destination.name}
        {test.data && (
          <p className={`${test.data.ok ? "success" : "error"} small`} role="status">
            {test.data.ok ? "Test passed" : "Test failed"}: {test.data.detail}
          </p>
        )}
        {test.isError && (
          <p className="error small" role="alert">
            Test failed: {errorMessage(test.error)}
          </p>
        )}
      </th>
      <td>{TYPE_LABELS[destination.settings.type]}</td>
      <td className="small">
        <code>{whereOf(destination.settings)}</code>
      </td>
      <td className="small">
        <HostKey destination={destination} />
      </td>
      <RowActions>
        <button
          type="button"
          aria-label={`Test ${destination.name}`}
          disabled={test.isPending}
          onClick={() => test.mutate(destination.id)}
        >
          {test.isPending ? "Testing…" : "Test"}
        </button>
        <button type="button" aria-label={`Browse ${destination.name}`} onClick={onBrowse}>
          Browse
        </button>
        {destination.settings.type === "repository" && (
          <button type="button" aria-label={`Use of ${destination.name}`} onClick={onUse}>
            Use
          </button>
        )}
        <button type="button" aria-label={`Edit ${destination.name}`} onClick={onEdit}>
          Edit
        </button>
        <button type="button" className="danger" aria-label={`Delete ${destination.name}`} onClick={onDelete}>
          Delete
        </button>
      </RowActions>
    </tr>
  );
}

/** A transfer or restore this page started, followed in the deploy console. */
interface Followed {
  run: Run;
  title: string;
  /** A pulled archive's name: announce it, and with `restore` open the restore dialog once it is here. */
  pulled?: string;
  restore?: boolean;
}

function Destinations() {
  const queryClient = useQueryClient();
  const destinations = useQuery(destinationsQueryOptions());
  const remove = useDeleteDestination();
  const [dialog, setDialog] = useState<{ destination: Destination | null } | null>(null);
  const [repositoryDialog, setRepositoryDialog] = useState<"new" | "recover" | null>(null);
  const [deleting, setDeleting] = useState<Destination | null>(null);
  const [browsing, setBrowsing] = useState<number | null>(null);
  const [using, setUsing] = useState<number | null>(null);
  const [followed, setFollowed] = useState<Followed | null>(null);
  const [restoring, setRestoring] = useState<ArchiveInfo | null>(null);
  const [message, setMessage] = useState<{ text: string; failed: boolean; toBackups?: boolean } | null>(null);
  const browsed = destinations.data?.find((d) => d.id === browsing) ?? null;
  const used = destinations.data?.find((d) => d.id === using && d.settings.type === "repository") ?? null;

  /** The local archive named `name`, read afresh (a pull has just put it there). */
  async function localArchive(name: string): Promise<ArchiveInfo | null> {
    try {
      const archives = await queryClient.fetchQuery({ ...backupsQueryOptions(LOCAL_HOST), staleTime: 0 });
      return archives.find((a) => a.name === name) ?? null;
    } catch (err) {
      setMessage({ text: errorMessage(err), failed: true });
      return null;
    }
  }

  async function succeeded(done: Followed) {
    await invalidateAfterTransfer(queryClient);
    if (!done.pulled) return;
    if (!done.restore) {
      setMessage({ text: `${done.pulled} is on this host now:`, failed: false, toBackups: true });
      return;
    }
    const archive = await localArchive(done.pulled);
    if (archive) setRestoring(archive);
    else setMessage({ text: `${done.pulled} was downloaded but is not among this host's archives`, failed: true });
  }

  return (
    <main className="page">
      <div className="page-head">
        <h1>Destinations</h1>
        <div className="page-tools">
          <button type="button" className="primary" onClick={() => setDialog({ destination: null })}>
            Add a destination
          </button>
          <button type="button" onClick={() => setRepositoryDialog("new")}>
            New repository
          </button>
          <button type="button" onClick={() => setRepositoryDialog("recover")}>
            Recover from a repository
          </button>
        </div>
      </div>
      <p className="muted">
        Where archives are sent besides this host: an SFTP server, S3-compatible object storage or an NFS export, each
        archive kept whole; or a repository (restic) on a folder, SFTP or S3, where backups are kept deduplicated and
        encrypted. Push an archive from the Backups page, or let a schedule do it.
      </p>
      {message && (
        <p className={message.failed ? "error" : "success"} role={message.failed ? "alert" : "status"}>
          {message.text}
          {message.toBackups && (
            <>
              {" "}
              see <Link to="/backups">Backups</Link>.
            </>
          )}
        </p>
      )}
      {followed && (
        <FollowedRun
          key={followed.run.id}
          run={followed.run}
          title={followed.title}
          onClose={() => setFollowed(null)}
          onSucceeded={() => void succeeded(followed)}
        />
      )}
      {destinations.isError && <ErrorBanner error={destinations.error} onRetry={() => void destinations.refetch()} />}
      {!destinations.data ? (
        !destinations.isError && <Loading />
      ) : destinations.data.length === 0 ? (
        <p className="muted">
          No destinations yet. On a fresh install, “Recover from a repository” opens the backups of a repository made
          before, with its recovery key.
        </p>
      ) : (
        <Table label="Destinations" columns={COLUMNS} actions>
          {destinations.data.map((destination) => (
            <DestinationRow
              key={destination.id}
              destination={destination}
              onBrowse={() => setBrowsing(destination.id)}
              onUse={() => setUsing(destination.id)}
              onEdit={() => setDialog({ destination })}
              onDelete={() => setDeleting(destination)}
            />
          ))}
        </Table>
      )}
      {used && <RepositoryUse key={used.id} destination={used} onClose={() => setUsing(null)} />}
      {browsed && (
        <RemoteArchives
          key={browsed.id}
          destination={browsed}
          onClose={() => setBrowsing(null)}
          onPulled={(run, name, restore) => {
            setMessage(null);
            setFollowed({
              run,
              title: restore ? `Downloading ${name} to restore it` : `Downloading ${name} from ${browsed.name}`,
              pulled: name,
              restore,
            });
          }}
          onAlreadyHere={async (name) => {
            const archive = await localArchive(name);
            if (archive) setRestoring(archive);
            return archive !== null;
          }}
        />
      )}
      {dialog && (
        <DestinationDialog
          destination={dialog.destination}
          onClose={() => setDialog(null)}
          onSaved={(saved) => {
            setDialog(null);
            setMessage({ text: `Destination ${saved.name} saved.`, failed: false });
          }}
        />
      )}
      {repositoryDialog && (
        <RepositoryDialog
          recover={repositoryDialog === "recover"}
          onClose={() => setRepositoryDialog(null)}
          onDone={(made) => {
            const recovered = repositoryDialog === "recover";
            setRepositoryDialog(null);
            if (recovered) {
              // What it holds is what was recovered: shown at once, to pull and restore.
              setBrowsing(made.id);
              setMessage({ text: `Repository ${made.name} recovered: its backups are listed below.`, failed: false });
            } else {
              setMessage({ text: `Repository ${made.name} made.`, failed: false });
            }
          }}
        />
      )}
      {deleting && (
        <ConfirmDelete
          title={`Delete destination ${deleting.name}?`}
          confirmLabel="Delete the destination"
          remove={remove}
          variables={deleting.id}
          onCancel={() => setDeleting(null)}
          onDeleted={() => {
            if (browsing === deleting.id) setBrowsing(null);
            if (using === deleting.id) setUsing(null);
            setDeleting(null);
          }}
        >
          <p>
            Stackyard forgets the destination and its stored secrets. The archives on it stay there, untouched.
            {deleting.settings.type === "repository" &&
              " This instance's own key to the repository goes too: to use the repository again, recover it with its recovery key."}
          </p>
        </ConfirmDelete>
      )}
      {restoring && (
        <RestoreDialog
          archive={restoring}
          onClose={() => setRestoring(null)}
          onStarted={(run) => {
            setRestoring(null);
            setMessage(null);
            setFollowed({ run, title: `Restoring into ${run.stack}` });
          }}
        />
      )}
    </main>
  );
}

/** Admins only (the sidebar shows it to them alone; the server refuses everybody else). */
export function DestinationsPage() {
  const mayManage = useCan("destinations.manage");
  if (!mayManage) {
    return (
      <main className="page">
        <h1>Destinations</h1>
        <p className="muted">Only admins manage backup destinations.</p>
      </main>
    );
  }
  return <Destinations />;
}
