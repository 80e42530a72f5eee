import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import type { FileEntry } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { useCan } from "../auth/permissions";
import { useCurrentUser } from "../auth/queries";
import { useHostInfo } from "../hosts/capabilities";
import { useHost } from "../hosts/host";
import { HostNote, HostSwitcher, HostUnavailable } from "../hosts/HostSwitcher";
import { Breadcrumb } from "./Breadcrumb";
import { DeleteDialog } from "./DeleteDialog";
import { EntryTable } from "./EntryTable";
import { FileEditor } from "./FileEditor";
import "./files.css";
import { FilesToolbar } from "./FilesToolbar";
import { DownloadList, UploadStatus } from "./FileTransfers";
import { filesHref, folderLabel, isWithin, zipName } from "./links";
import { NewEntryForm } from "./NewEntryForm";
import { baseName, joinPath, parentPath } from "./paths";
import { folderQueryOptions } from "./queries";
import { useShowHidden } from "./showHidden";
import { useDownloads } from "./useDownloads";
import { useDropUpload } from "./useDropUpload";
import { useUploads } from "./useUploads";

function AdminsOnly() {
  return (
    <main className="page">
      <h1>Files</h1>
      <div className="card">
        <p>Files are for admins.</p>
        <p className="muted">The stacks folder holds every stack&apos;s files, secrets included.</p>
      </div>
    </main>
  );
}

/** The stacks folder of the host chosen with the host switcher (`?host=`), admins only. */
export function FilesPage() {
  const user = useCurrentUser();
  const allowed = useCan("files");
  const host = useHost();
  const info = useHostInfo(host);
  if (user && !allowed) return <AdminsOnly />;
  const unavailable = info.unavailable("files");
  if (unavailable || !info.ready) {
    return (
      <main className="page files-page">
        <div className="page-head">
          <h1>Files</h1>
          <div className="page-tools">
            <HostSwitcher page="/files" />
          </div>
        </div>
        <HostNote info={info} />
        {unavailable ? <HostUnavailable reason={unavailable} /> : <Loading />}
      </main>
    );
  }
  // Made anew for each host: transfers and forms of one host are not carried to another.
  return <FileBrowser key={String(host)} />;
}

/** An upload replaced the file open in the editor: which one, and a count that changes each time. */
interface Replaced {
  path: string;
  count: number;
}

function FileBrowser() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const host = useHost();
  const info = useHostInfo(host);
  const folder = joinPath(params.get("path") ?? "");
  const editing = params.get("edit");
  const [showHidden, setShowHidden] = useShowHidden();
  const listing = useQuery(folderQueryOptions(host, folder, showHidden));
  const href = (at: string, edit?: string | null) => filesHref(at, edit, host);
  const [replaced, setReplaced] = useState<Replaced | null>(null);
  const uploads = useUploads({
    onDotSegment: () => setShowHidden(true),
    onUploaded: (paths) => {
      if (editing && paths.includes(editing)) {
        setReplaced((before) => ({ path: editing, count: (before?.count ?? 0) + 1 }));
      }
    },
  });
  const downloads = useDownloads();
  const drop = useDropUpload(folder, uploads);
  const [creating, setCreating] = useState<"folder" | "file" | null>(null);
  const [deleting, setDeleting] = useState<FileEntry | null>(null);

  function downloadEntry(entry: FileEntry) {
    const folderLike = entry.type === "dir" || (entry.type === "symlink" && entry.link === "dir");
    downloads.start(entry.path, folderLike ? zipName(entry.path) : entry.name);
  }

  function onFilesPicked(list: FileList | null) {
    const files = Array.from(list ?? []);
    if (files.length) uploads.start(folder, files.map((file) => ({ file, relativePath: file.name })), false);
  }

  function onFolderPicked(list: FileList | null) {
    const files = Array.from(list ?? []);
    if (files.length === 0) {
      uploads.fail("The selected folder is empty: there is nothing to upload.");
      return;
    }
    uploads.start(
      folder,
      files.map((file) => ({ file, relativePath: file.webkitRelativePath || file.name })),
      true,
    );
  }

  function onRenamed(old: FileEntry, path: string) {
    // Keep an open file open under its new name.
    if (editing && isWithin(editing, old.path)) {
      void navigate(href(folder, path + editing.slice(old.path.length)), { replace: true });
    }
  }

  // A non-admin is told so above; any refusal here (a path leading out of the stacks
  // folder, say) is shown with the server's detail.
  const entries = listing.data?.entries ?? [];

  return (
    <main className="page files-page">
      <div className="page-head">
        <h1>Files</h1>
        <div className="page-tools">
          <HostSwitcher page="/files" />
          <label className="check">
            <input type="checkbox" checked={showHidden} onChange={(e) => setShowHidden(e.target.checked)} />
            <span>Show hidden</span>
          </label>
        </div>
      </div>
      <HostNote info={info} />
      <Breadcrumb folder={folder} />

      <FilesToolbar
        uploading={uploads.running}
        unusable={listing.isError && !listing.data}
        onNew={setCreating}
        onFilesPicked={onFilesPicked}
        onFolderPicked={onFolderPicked}
        onDownloadFolder={() => downloads.start(folder, zipName(folder))}
      />

      {creating && (
        <NewEntryForm
          key={creating}
          kind={creating}
          folder={folder}
          onCancel={() => setCreating(null)}
          onDone={(path) => {
            setCreating(null);
            if (creating === "file") void navigate(href(folder, path));
          }}
        />
      )}

      <UploadStatus uploads={uploads} folderLabel={folderLabel} />
      <DownloadList downloads={downloads.downloads} onCancel={downloads.cancel} onDismiss={downloads.dismiss} />

      {editing && (
        <FileEditor
          key={editing}
          path={editing}
          replaced={replaced?.path === editing ? replaced.count : 0}
          onClose={() => void navigate(href(folder))}
          onDownload={() => downloads.start(editing, baseName(editing))}
        />
      )}

      <section
        className={`card drop-zone${drop.dragging ? " drop-active" : ""}`}
        aria-labelledby="listing-title"
        {...drop.handlers}
      >
        <h2 id="listing-title" className="visually-hidden">
          Contents of {folderLabel(folder)}
        </h2>
        {drop.dragging && (
          <div className="drop-hint" aria-hidden="true">
            Drop files or folders to upload them to {folderLabel(folder)}
          </div>
        )}
        {listing.isError && !listing.data ? (
          <>
            <ErrorBanner error={listing.error} onRetry={() => void listing.refetch()} />
            {folder && (
              <p>
                <Link to={href("")}>Back to the stacks folder</Link>
              </p>
            )}
          </>
        ) : !listing.data ? (
          <Loading />
        ) : (
          <>
            {listing.isError && <ErrorBanner error={listing.error} onRetry={() => void listing.refetch()} />}
            <EntryTable
              folder={folder}
              entries={entries}
              busy={listing.isFetching}
              parent={folder ? <Link to={href(parentPath(folder))}>Parent folder</Link> : null}
              onDownload={downloadEntry}
              onDelete={setDeleting}
              onRenamed={onRenamed}
            />
            {entries.length === 0 && (
              <p className="muted">
                This folder is empty{showHidden ? "" : " (hidden files are not shown)"}. Drop files here or use
                “Upload files”.
              </p>
            )}
            <p className="muted small drop-tip">Tip: drop files or folders on this list to upload them here.</p>
          </>
        )}
      </section>

      {deleting && (
        <DeleteDialog
          entry={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={() => {
            if (editing && isWithin(editing, deleting.path)) void navigate(href(folder), { replace: true });
          }}
        />
      )}
    </main>
  );
}
