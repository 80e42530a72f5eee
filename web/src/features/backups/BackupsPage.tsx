import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { Link } from "react-router";
import { ApiError, errorMessage } from "../../api/errors";
import type { ArchiveInfo, Run, VerifyReport } from "../../api/types";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { ConfirmDialog } from "../../components/Dialog";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatBytes, formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { ProgressBar } from "../../components/ProgressBar";
import { Cell, Row, RowActions, Table } from "../../components/Table";
import { useCan } from "../auth/permissions";
import { destinationKeys, invalidateAfterTransfer } from "../destinations/queries";
import { useHostInfo } from "../hosts/capabilities";
import { useHost, withHost } from "../hosts/host";
import { HostNote, HostSwitcher, HostUnavailable } from "../hosts/HostSwitcher";
import "./backups.css";
import { DrillDialog } from "./DrillDialog";
import { DrillsSection, useStackDrills } from "./Drills";
import { FollowedRun } from "./FollowedRun";
import { PullDialog } from "./PullDialog";
import { PushDialog } from "./PushDialog";
import {
  backupDownloadUrl,
  backupKeys,
  backupsQueryOptions,
  uploadBackup,
  useDeleteBackup,
  useVerifyBackup,
} from "./queries";
import { RestoreDialog } from "./RestoreDialog";

const COLUMNS = ["Archive", "Stack", "Host", "Made", "Size", "Holds"] as const;
/** The columns that leave the table, in this order, when its box is too narrow for all. */
const FOLD = ["Holds", "Host", "Stack", "Size", "Made"] as const;

/**
 * Picks an archive file and uploads it with its progress; the server checks it through.
 * The same archive again (its name taken here) is asked about: keep both, or not.
 */
function UploadArchive() {
  const queryClient = useQueryClient();
  const host = useHost();
  const input = useRef<HTMLInputElement>(null);
  const [state, setState] = useState<{ name: string; sent: number; size: number } | null>(null);
  const [message, setMessage] = useState<{ text: string; failed: boolean } | null>(null);
  const [taken, setTaken] = useState<{ file: File; detail: string } | null>(null);

  async function send(file: File, keepBoth = false) {
    setMessage(null);
    setTaken(null);
    setState({ name: file.name, sent: 0, size: file.size });
    try {
      const info = await uploadBackup(host, file, (sent) => setState({ name: file.name, sent, size: file.size }), {
        keepBoth,
      });
      setMessage({ text: `Uploaded and checked: ${info.name}`, failed: false });
      await queryClient.invalidateQueries({ queryKey: backupKeys.list(host) });
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) setTaken({ file, detail: err.message });
      else setMessage({ text: `${file.name}: ${errorMessage(err)}`, failed: true });
    } finally {
      setState(null);
      if (input.current) input.current.value = "";
    }
  }

  return (
    <div className="upload-archive">
      <label className="button">
        Upload an archive
        <input
          ref={input}
          type="file"
          accept=".tar,application/x-tar"
          className="visually-hidden"
          aria-label="Upload an archive"
          disabled={state !== null}
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file) void send(file);
          }}
        />
      </label>
      {state && (
        <div className="transfer-item">
          <span role="status">
            Uploading {state.name}: {formatBytes(state.sent)} of {formatBytes(state.size)}
          </span>
          <ProgressBar label="Upload progress" percent={state.size ? (100 * state.sent) / state.size : null} />
        </div>
      )}
      {message && (
        <p className={message.failed ? "error" : "success"} role={message.failed ? "alert" : "status"}>
          {message.text}
        </p>
      )}
      {taken && (
        <ConfirmDialog
          title="Keep both archives?"
          confirmLabel="Keep both"
          onConfirm={() => void send(taken.file, true)}
          onCancel={() => setTaken(null)}
        >
          {taken.detail}. Keep the upload beside it under a name of its own?
        </ConfirmDialog>
      )}
    </div>
  );
}

function VerifyResult({ report }: { report: VerifyReport }) {
  if (report.ok) {
    const special = report.members.flatMap((member) =>
      member.member.startsWith("volumes/") ? [] : member.special.map((name) => name.replace(/^data\//, "")),
    );
    return (
      <p className="success small" role="status">
        Checked: {report.members.length} parts, every checksum right, every entry safe to restore.
        {special.length > 0 &&
          ` Device nodes or setuid/setgid files outside volumes, written only when the restore asks for them: ${special.join(", ")}.`}
      </p>
    );
  }
  return (
    <p className="error small" role="alert">
      Damaged: {report.error}
    </p>
  );
}

function ArchiveRow({
  archive,
  drilled,
  onDrill,
  onRestore,
  onPush,
  onDelete,
}: {
  archive: ArchiveInfo;
  /** A restore drill has verified it. */
  drilled: boolean;
  onDrill: () => void;
  onRestore: () => void;
  onPush: () => void;
  onDelete: () => void;
}) {
  const host = useHost();
  const verify = useVerifyBackup();
  const mayDrill = useCan("backups.create");
  const mayAdminister = useCan("backups.administer");
  const mayPush = useCan("destinations.manage");
  return (
    <Row>
      <th scope="row">
        <code>{archive.name}</code>
        {drilled && (
          <>
            {" "}
            <span className="badge drill-verified" title="A restore drill restored it, compared it and started it">
              verified
            </span>
          </>
        )}
        {archive.error && <div className="error small">{archive.error}</div>}
        {verify.data && <VerifyResult report={verify.data} />}
        {verify.isError && <div className="error small">{errorMessage(verify.error)}</div>}
      </th>
      <Cell column="Stack" className="nowrap">
        {archive.stack_id ? (
          <Link to={withHost(`/stacks/${encodeURIComponent(archive.stack_id)}`, host)}>{archive.stack_id}</Link>
        ) : (
          "—"
        )}
      </Cell>
      <Cell column="Host">{archive.host ?? "—"}</Cell>
      <Cell column="Made" className="nowrap">
        {formatDateTime(archive.created_at)}
      </Cell>
      <Cell column="Size" className="nowrap">
        {formatBytes(archive.size)}
      </Cell>
      <Cell column="Holds" className="small">
        {archive.assets.length} volume{archive.assets.length === 1 ? "" : "s"} and folders
        {archive.format_version === 1 && " (version 1)"}
      </Cell>
      <RowActions wrap>
        <button type="button" onClick={() => verify.mutate(archive.name)} disabled={verify.isPending}>
          {verify.isPending ? "Checking…" : "Verify"}
        </button>
        {mayDrill && (
          <button type="button" onClick={onDrill} disabled={Boolean(archive.error) || !archive.stack_id}>
            Drill
          </button>
        )}
        {mayAdminister && (
          <>
            <a className="button" href={backupDownloadUrl(host, archive.name)} download>
              Download
            </a>
            <button type="button" onClick={onRestore} disabled={Boolean(archive.error)}>
              Restore
            </button>
            {mayPush && (
              <button type="button" onClick={onPush} disabled={Boolean(archive.error)}>
                Push…
              </button>
            )}
            <button type="button" className="danger" onClick={onDelete} aria-label={`Delete ${archive.name}`}>
              Delete
            </button>
          </>
        )}
      </RowActions>
    </Row>
  );
}

/** The archives of the host chosen with the host switcher (`?host=`), made anew for each host. */
export function BackupsPage() {
  const host = useHost();
  return <HostBackups key={String(host)} />;
}

function HostBackups() {
  const queryClient = useQueryClient();
  const host = useHost();
  const info = useHostInfo(host);
  const unavailable = info.unavailable("backups");
  const usable = info.ready && !unavailable;
  const archives = useQuery({ ...backupsQueryOptions(host), enabled: usable });
  const mayAdminister = useCan("backups.administer") && usable;
  const mayPull = useCan("destinations.manage") && usable;
  const remove = useDeleteBackup();
  const stackIds = [...new Set((archives.data ?? []).flatMap((a) => (a.stack_id ? [a.stack_id] : [])))].sort();
  const drills = useStackDrills(host, stackIds, usable);
  const [drilling, setDrilling] = useState<ArchiveInfo | null>(null);
  const [restoring, setRestoring] = useState<ArchiveInfo | null>(null);
  const [pushing, setPushing] = useState<ArchiveInfo | null>(null);
  const [deleting, setDeleting] = useState<ArchiveInfo | null>(null);
  const [pulling, setPulling] = useState(false);
  /** A drill, restore, push or pull this page started, followed in the deploy console (an agent's push or pull is a transfer). */
  const [started, setStarted] = useState<{ run: Run; title: string; transfer?: boolean; drill?: boolean } | null>(
    null,
  );

  return (
    <main className="page page-wide">
      <div className="page-head">
        <h1>Backups</h1>
        <div className="page-tools">
          <HostSwitcher page="/backups" />
          {mayPull && (
            <button type="button" onClick={() => setPulling(true)}>
              Pull from a destination…
            </button>
          )}
          {mayAdminister && <UploadArchive />}
        </div>
      </div>
      <HostNote info={info} />
      <p className="muted">
        Archives kept on {host === null ? "this host" : info.name}. Back up a stack from its page ("Back up"): its
        folder and the volumes and folders you choose, checked once written.
      </p>
      {unavailable && <HostUnavailable reason={unavailable} />}
      {started && (
        <FollowedRun
          key={started.run.id}
          run={started.run}
          title={started.title}
          transfer={started.transfer}
          onClose={() => setStarted(null)}
          onSucceeded={() =>
            void (host === null
              ? invalidateAfterTransfer(queryClient)
              : Promise.all([
                  queryClient.invalidateQueries({ queryKey: backupKeys.list(host) }),
                  queryClient.invalidateQueries({ queryKey: destinationKeys.allArchives }),
                ]))
          }
          onEnded={(run) => {
            // A drill keeps its record, verified or not.
            if (started.drill) void queryClient.invalidateQueries({ queryKey: backupKeys.drills(host, run.stack) });
          }}
        />
      )}
      {archives.isError && <ErrorBanner error={archives.error} onRetry={() => void archives.refetch()} />}
      {unavailable ? null : !archives.data ? (
        !archives.isError && <Loading />
      ) : archives.data.length === 0 ? (
        <p className="muted">No archives yet.</p>
      ) : (
        <Table label="Archives" columns={COLUMNS} actions fold={FOLD}>
          {archives.data.map((archive) => (
            <ArchiveRow
              key={archive.name}
              archive={archive}
              drilled={drills.verified.has(archive.name)}
              onDrill={() => setDrilling(archive)}
              onRestore={() => setRestoring(archive)}
              onPush={() => setPushing(archive)}
              onDelete={() => setDeleting(archive)}
            />
          ))}
        </Table>
      )}
      {!unavailable && <DrillsSection stackIds={stackIds} drills={drills} />}
      {drilling && (
        <DrillDialog
          archive={drilling}
          onClose={() => setDrilling(null)}
          onStarted={(run) => {
            setDrilling(null);
            setStarted({ run, title: `Restore drill of ${drilling.name}`, drill: true });
          }}
        />
      )}
      {restoring && (
        <RestoreDialog
          archive={restoring}
          onClose={() => setRestoring(null)}
          onStarted={(run) => {
            setRestoring(null);
            setStarted({ run, title: `Restoring into ${run.stack}` });
          }}
        />
      )}
      {pushing && (
        <PushDialog
          archive={pushing}
          onClose={() => setPushing(null)}
          onStarted={(run, destination) => {
            setPushing(null);
            setStarted({ run, title: `Pushing ${pushing.name} to ${destination.name}`, transfer: host !== null });
          }}
        />
      )}
      {pulling && (
        <PullDialog
          host={host}
          hostName={host === null ? "this host" : info.name}
          onClose={() => setPulling(false)}
          onStarted={(run, name, destination) => {
            setPulling(false);
            setStarted({
              run,
              title: `Pulling ${name} from ${destination.name}`,
              transfer: host !== null,
            });
          }}
        />
      )}
      {deleting && (
        <ConfirmDelete
          title={`Delete ${deleting.name}?`}
          confirmLabel="Delete the archive"
          remove={remove}
          variables={deleting.name}
          onCancel={() => setDeleting(null)}
          onDeleted={() => setDeleting(null)}
        >
          <p>
            The archive ({formatBytes(deleting.size)}) is removed from this host for good. The stack and its data are not
            touched.
          </p>
        </ConfirmDelete>
      )}
    </main>
  );
}
