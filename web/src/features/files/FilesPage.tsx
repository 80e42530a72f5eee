import { useQuery } from "@tanstack/react-query";
import { useCallback, useRef, useState, type DragEvent, type FormEvent, type Ref } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { ApiError, errorMessage } from "../../api/errors";
import type { FileEntry } from "../../api/types";
import { ConfirmDialog } from "../../components/Dialog";
import { ErrorBanner } from "../../components/ErrorBanner";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { formatBytes, formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { useCurrentUser } from "../auth/queries";
import { droppedFiles } from "./drop";
import { FileEditor } from "./FileEditor";
import { DownloadList, UploadStatus } from "./FileTransfers";
import { baseName, joinPath, nameProblem, parentPath, pathSegments } from "./paths";
import { folderQueryOptions, useCreateFile, useDeleteEntry, useMakeFolder, useMoveEntry } from "./queries";
import { useShowHidden } from "./showHidden";
import type { UploadItem } from "./upload";
import { useDownloads } from "./useDownloads";
import { useUploads } from "./useUploads";

/** The Files page at `folder`, with `edit` open in the editor: `/files?path=a/b&edit=a/b/x.yml`. */
function filesHref(folder: string, edit?: string | null): string {
  const query: string[] = [];
  const encode = (value: string) => encodeURIComponent(value).replace(/%2F/g, "/");
  if (folder) query.push(`path=${encode(folder)}`);
  if (edit) query.push(`edit=${encode(edit)}`);
  return query.length ? `/files?${query.join("&")}` : "/files";
}

/** "the stacks folder" or "a/b", for messages. */
function folderLabel(path: string): string {
  return path ? path : "the stacks folder";
}

function zipName(folder: string): string {
  return `${baseName(folder) || "stacks"}.zip`;
}

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

export function FilesPage() {
  const user = useCurrentUser();
  if (user && user.role !== "admin") return <AdminsOnly />;
  return <FileBrowser />;
}

function Breadcrumb({ folder }: { folder: string }) {
  const parts = pathSegments(folder);
  return (
    <nav aria-label="Breadcrumb" className="breadcrumb files-breadcrumb">
      <ol>
        <li>
          <Link to={filesHref("")} aria-current={parts.length === 0 ? "page" : undefined}>
            Stacks folder
          </Link>
        </li>
        {parts.map((part, i) => {
          const path = parts.slice(0, i + 1).join("/");
          return (
            <li key={path}>
              <Link to={filesHref(path)} aria-current={i === parts.length - 1 ? "page" : undefined}>
                {part}
              </Link>
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

/** An inline form for the name of a new folder or file in `folder`. */
function NewEntryForm({
  kind,
  folder,
  onDone,
  onCancel,
}: {
  kind: "folder" | "file";
  folder: string;
  onDone: (path: string) => void;
  onCancel: () => void;
}) {
  const makeFolder = useMakeFolder();
  const createFile = useCreateFile();
  const mutation = kind === "folder" ? makeFolder : createFile;
  const [name, setName] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const label = kind === "folder" ? "Folder name" : "File name";

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const issue = nameProblem(name);
    setProblem(issue);
    if (issue) return;
    const path = joinPath(folder, name.trim());
    mutation.mutate(path, { onSuccess: (created) => onDone(created.path) });
  }

  return (
    <form className="form inline card new-entry" onSubmit={onSubmit} aria-label={kind === "folder" ? "New folder" : "New file"}>
      <Field label={label}>
        <input autoFocus value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <div className="actions">
        <button type="submit" className="primary" disabled={mutation.isPending}>
          {mutation.isPending ? "Creating…" : "Create"}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {(problem || mutation.isError) && (
        <p className="error" role="alert">
          {problem ?? errorMessage(mutation.error)}
        </p>
      )}
    </form>
  );
}

const TYPE_LABEL: Record<FileEntry["type"], string> = {
  dir: "Folder",
  file: "File",
  symlink: "Link",
  other: "Special file",
};

/** Small line icons (no icon font or emoji: those are missing on some systems). */
const TYPE_ICON: Record<FileEntry["type"] | "up", string> = {
  dir: "M1.5 3.5h4l1.5 1.5h7.5v8.5h-13z",
  file: "M3.5 1.5h6l3 3v10h-9z M9.5 1.5v3h3",
  symlink: "M6.5 9.5l3-3 M7 4.5l1.5-1.5a2.5 2.5 0 0 1 3.5 3.5l-1.5 1.5 M9 11.5l-1.5 1.5a2.5 2.5 0 0 1-3.5-3.5l1.5-1.5",
  other: "M8 2l6 6-6 6-6-6z",
  up: "M8 13.5v-10 M3.5 8l4.5-4.5 4.5 4.5",
};

function EntryIcon({ type }: { type: FileEntry["type"] | "up" }) {
  return (
    <svg className={`entry-icon icon-${type}`} viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
      <path d={TYPE_ICON[type]} />
    </svg>
  );
}

function EntryName({ entry, folder }: { entry: FileEntry; folder: string }) {
  return (
    <span className={`entry-name entry-${entry.type}`} title={TYPE_LABEL[entry.type]}>
      <EntryIcon type={entry.type} />
      <span className="visually-hidden">{TYPE_LABEL[entry.type]}: </span>
      {entry.type === "dir" ? (
        <Link to={filesHref(entry.path)}>{entry.name}</Link>
      ) : entry.type === "file" ? (
        <Link to={filesHref(folder, entry.path)}>{entry.name}</Link>
      ) : (
        <span>{entry.name}</span>
      )}
      {entry.type === "symlink" && entry.target !== null && (
        <span className="muted entry-target"> -&gt; {entry.target}</span>
      )}
    </span>
  );
}

function RenameForm({ entry, onDone, onCancel }: { entry: FileEntry; onDone: (path: string) => void; onCancel: () => void }) {
  const move = useMoveEntry();
  const [name, setName] = useState(entry.name);
  const [problem, setProblem] = useState<string | null>(null);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const issue = nameProblem(name);
    setProblem(issue);
    if (issue) return;
    if (name.trim() === entry.name) {
      onCancel();
      return;
    }
    const destination = joinPath(parentPath(entry.path), name.trim());
    move.mutate({ source: entry.path, destination }, { onSuccess: (moved) => onDone(moved.path) });
  }

  return (
    <form className="rename-form" onSubmit={onSubmit} aria-label={`Rename ${entry.name}`}>
      <input
        autoFocus
        aria-label={`New name for ${entry.name}`}
        value={name}
        onChange={(e) => setName(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") onCancel();
        }}
      />
      <button type="submit" className="primary" disabled={move.isPending}>
        Save
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      {(problem || move.isError) && (
        <p className="error small" role="alert">
          {problem ?? errorMessage(move.error)}
        </p>
      )}
    </form>
  );
}

function EntryRow({
  entry,
  folder,
  onDownload,
  onDelete,
  onRenamed,
}: {
  entry: FileEntry;
  folder: string;
  onDownload: (entry: FileEntry) => void;
  onDelete: (entry: FileEntry) => void;
  onRenamed: (entry: FileEntry, path: string) => void;
}) {
  const [renaming, setRenaming] = useState(false);
  return (
    <tr>
      <td className="entry-cell">
        {renaming ? (
          <RenameForm
            entry={entry}
            onCancel={() => setRenaming(false)}
            onDone={(path) => {
              setRenaming(false);
              onRenamed(entry, path);
            }}
          />
        ) : (
          <EntryName entry={entry} folder={folder} />
        )}
      </td>
      <td className="nowrap num">{entry.type === "file" ? formatBytes(entry.size) : "—"}</td>
      <td className="nowrap">
        <time dateTime={entry.modified}>{formatDateTime(entry.modified)}</time>
      </td>
      <td>
        <code>{entry.mode}</code>
      </td>
      <RowActions>
        <span className="entry-actions">
          {entry.type !== "other" && (
            <button type="button" aria-label={`Download ${entry.name}`} onClick={() => onDownload(entry)}>
              Download
            </button>
          )}
          <button type="button" aria-label={`Rename ${entry.name}`} onClick={() => setRenaming(true)} disabled={renaming}>
            Rename
          </button>
          <button type="button" className="danger" aria-label={`Delete ${entry.name}`} onClick={() => onDelete(entry)}>
            Delete
          </button>
        </span>
      </RowActions>
    </tr>
  );
}

function DeleteDialog({ entry, onClose, onDeleted }: { entry: FileEntry; onClose: () => void; onDeleted: () => void }) {
  const remove = useDeleteEntry();
  const isFolder = entry.type === "dir";
  return (
    <ConfirmDialog
      title={`Delete ${isFolder ? "folder" : "file"} ${entry.name}?`}
      confirmLabel={remove.isPending ? "Deleting…" : "Delete"}
      danger
      busy={remove.isPending}
      onCancel={onClose}
      onConfirm={() =>
        remove.mutate(
          { path: entry.path, recursive: isFolder },
          {
            onSuccess: () => {
              onDeleted();
              onClose();
            },
          },
        )
      }
    >
      {isFolder ? (
        <p>
          This deletes the folder <code>{entry.path}</code> and everything inside it. It cannot be undone.
        </p>
      ) : (
        <p>
          This deletes <code>{entry.path}</code>. It cannot be undone.
        </p>
      )}
      {remove.isError && <ErrorText error={remove.error} />}
    </ConfirmDialog>
  );
}

/** A hidden file input that a toolbar button clicks; emptied after each pick so the same files can be picked again. */
function FilePicker({
  ref,
  testId,
  onPick,
}: {
  ref: Ref<HTMLInputElement>;
  testId: string;
  onPick: (files: FileList | null) => void;
}) {
  return (
    <input
      ref={ref}
      type="file"
      multiple
      hidden
      data-testid={testId}
      onChange={(e) => {
        onPick(e.target.files);
        e.target.value = "";
      }}
    />
  );
}

function isForbidden(err: unknown): boolean {
  return err instanceof ApiError && err.status === 403;
}

function FileBrowser() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const folder = joinPath(params.get("path") ?? "");
  const editing = params.get("edit");
  const [showHidden, setShowHidden] = useShowHidden();
  const listing = useQuery(folderQueryOptions(folder, showHidden));
  const uploads = useUploads({ onDotSegment: () => setShowHidden(true) });
  const downloads = useDownloads();
  const [creating, setCreating] = useState<"folder" | "file" | null>(null);
  const [deleting, setDeleting] = useState<FileEntry | null>(null);
  const [dragging, setDragging] = useState(false);
  const dragDepth = useRef(0);
  const filesInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement | null>(null);
  // React has no prop for the folder picker's attribute.
  const setFolderInput = useCallback((el: HTMLInputElement | null) => {
    folderInput.current = el;
    el?.setAttribute("webkitdirectory", "");
    el?.setAttribute("directory", "");
  }, []);

  if (isForbidden(listing.error)) return <AdminsOnly />;

  function downloadEntry(entry: FileEntry) {
    downloads.start(entry.path, entry.type === "dir" ? zipName(entry.path) : entry.name);
  }

  function upload(items: UploadItem[], overwrite: boolean) {
    uploads.start(folder, items, overwrite);
  }

  function onFilesPicked(list: FileList | null) {
    const files = Array.from(list ?? []);
    if (files.length) upload(files.map((file) => ({ file, relativePath: file.name })), false);
  }

  function onFolderPicked(list: FileList | null) {
    const files = Array.from(list ?? []);
    if (files.length === 0) {
      uploads.fail("The selected folder is empty: there is nothing to upload.");
      return;
    }
    upload(
      files.map((file) => ({ file, relativePath: file.webkitRelativePath || file.name })),
      true,
    );
  }

  const hasFiles = (event: DragEvent) => Array.from(event.dataTransfer?.types ?? []).includes("Files");

  const dropHandlers = {
    onDragEnter(event: DragEvent<HTMLElement>) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      dragDepth.current += 1;
      setDragging(true);
    },
    onDragOver(event: DragEvent<HTMLElement>) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = uploads.running ? "none" : "copy";
    },
    onDragLeave(event: DragEvent<HTMLElement>) {
      if (!hasFiles(event)) return;
      dragDepth.current = Math.max(0, dragDepth.current - 1);
      if (dragDepth.current === 0) setDragging(false);
    },
    onDrop(event: DragEvent<HTMLElement>) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      dragDepth.current = 0;
      setDragging(false);
      if (uploads.running) {
        uploads.fail("An upload is already running; drop again when it is done.");
        return;
      }
      const target = folder;
      droppedFiles(event.dataTransfer).then(
        ({ items, folders }) => {
          if (items.length === 0) uploads.fail(folders ? "The dropped folder is empty: there is nothing to upload." : "Nothing to upload.");
          else uploads.start(target, items, false);
        },
        (err: unknown) => uploads.fail(`Cannot read the dropped files: ${errorMessage(err)}`),
      );
    },
  };

  const entries = listing.data?.entries ?? [];

  return (
    <main className="page files-page">
      <div className="page-head">
        <h1>Files</h1>
        <div className="page-tools">
          <label className="check">
            <input type="checkbox" checked={showHidden} onChange={(e) => setShowHidden(e.target.checked)} />
            <span>Show hidden</span>
          </label>
        </div>
      </div>
      <Breadcrumb folder={folder} />

      <div className="files-toolbar" role="toolbar" aria-label="Folder actions">
        <button type="button" onClick={() => setCreating("folder")}>
          New folder
        </button>
        <button type="button" onClick={() => setCreating("file")}>
          New file
        </button>
        <button type="button" disabled={uploads.running} onClick={() => filesInput.current?.click()}>
          Upload files
        </button>
        <button type="button" disabled={uploads.running} onClick={() => folderInput.current?.click()}>
          Upload folder
        </button>
        <button type="button" onClick={() => downloads.start(folder, zipName(folder))}>
          Download folder
        </button>
        <FilePicker ref={filesInput} testId="upload-files-input" onPick={onFilesPicked} />
        <FilePicker ref={setFolderInput} testId="upload-folder-input" onPick={onFolderPicked} />
      </div>

      {creating && (
        <NewEntryForm
          key={creating}
          kind={creating}
          folder={folder}
          onCancel={() => setCreating(null)}
          onDone={(path) => {
            setCreating(null);
            if (creating === "file") void navigate(filesHref(folder, path));
          }}
        />
      )}

      <UploadStatus uploads={uploads} folderLabel={folderLabel} />
      <DownloadList downloads={downloads.downloads} onCancel={downloads.cancel} onDismiss={downloads.dismiss} />

      {editing && (
        <FileEditor
          key={editing}
          path={editing}
          onClose={() => void navigate(filesHref(folder))}
          onDownload={() => downloads.start(editing, baseName(editing))}
        />
      )}

      <section
        className={`card drop-zone${dragging ? " drop-active" : ""}`}
        aria-labelledby="listing-title"
        {...dropHandlers}
      >
        <h2 id="listing-title" className="visually-hidden">
          Contents of {folderLabel(folder)}
        </h2>
        {dragging && (
          <div className="drop-hint" aria-hidden="true">
            Drop files or folders to upload them to {folderLabel(folder)}
          </div>
        )}
        {listing.isError && !listing.data ? (
          <>
            <ErrorBanner error={listing.error} onRetry={() => void listing.refetch()} />
            {folder && (
              <p>
                <Link to={filesHref("")}>Back to the stacks folder</Link>
              </p>
            )}
          </>
        ) : !listing.data ? (
          <Loading />
        ) : (
          <>
            {listing.isError && <ErrorBanner error={listing.error} onRetry={() => void listing.refetch()} />}
            <Table label="Files" columns={["Name", "Size", "Modified", "Mode"]} actions busy={listing.isFetching}>
              {folder && (
                <tr>
                  <td colSpan={5}>
                    <span className="entry-name">
                      <EntryIcon type="up" />
                      <Link to={filesHref(parentPath(folder))}>Parent folder</Link>
                    </span>
                  </td>
                </tr>
              )}
              {entries.map((entry) => (
                <EntryRow
                  key={entry.path}
                  entry={entry}
                  folder={folder}
                  onDownload={downloadEntry}
                  onDelete={setDeleting}
                  onRenamed={(old, path) => {
                    // Keep an open file open under its new name.
                    if (editing === old.path) void navigate(filesHref(folder, path), { replace: true });
                    else if (editing?.startsWith(`${old.path}/`)) {
                      void navigate(filesHref(folder, path + editing.slice(old.path.length)), { replace: true });
                    }
                  }}
                />
              ))}
            </Table>
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
            if (editing && (editing === deleting.path || editing.startsWith(`${deleting.path}/`))) {
              void navigate(filesHref(folder), { replace: true });
            }
          }}
        />
      )}
    </main>
  );
}
