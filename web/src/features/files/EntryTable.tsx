import { useState, type FormEvent, type ReactNode } from "react";
import { Link } from "react-router";
import { errorMessage } from "../../api/errors";
import type { FileEntry } from "../../api/types";
import { formatBytes, formatDateTime } from "../../components/format";
import { useHost } from "../hosts/host";
import { filesHref } from "./links";
import { joinPath, nameProblem, parentPath } from "./paths";
import { useMoveEntry } from "./queries";

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

/** Why a link cannot be opened, shown after its target. */
const LINK_NOTE: Record<NonNullable<FileEntry["link"]>, string | null> = {
  file: null,
  dir: null,
  outside: "outside the stacks folder: not followed",
  broken: "broken link",
  other: "a special file",
};

/** What an entry is for opening and downloading: a link counts as what it leads to inside the root. */
export function effectiveType(entry: FileEntry): "file" | "dir" | null {
  if (entry.type === "file" || entry.type === "dir") return entry.type;
  if (entry.type === "symlink" && (entry.link === "file" || entry.link === "dir")) return entry.link;
  return null;
}

export function EntryIcon({ type }: { type: FileEntry["type"] | "up" }) {
  return (
    <svg className={`entry-icon icon-${type}`} viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
      <path d={TYPE_ICON[type]} />
    </svg>
  );
}

/** The name, a link into the folder or to the editor (through a symlink that stays inside too). */
export function EntryName({ entry, folder }: { entry: FileEntry; folder: string }) {
  const host = useHost();
  const opens = effectiveType(entry);
  const note = entry.type === "symlink" && entry.link ? LINK_NOTE[entry.link] : null;
  return (
    <span className={`entry-name entry-${entry.type}`} title={TYPE_LABEL[entry.type]}>
      <EntryIcon type={entry.type} />
      <span className="visually-hidden">{TYPE_LABEL[entry.type]}: </span>
      {opens === "dir" ? (
        <Link to={filesHref(entry.path, null, host)}>{entry.name}</Link>
      ) : opens === "file" ? (
        <Link to={filesHref(folder, entry.path, host)}>{entry.name}</Link>
      ) : (
        <span>{entry.name}</span>
      )}
      {entry.type === "symlink" && entry.target !== null && (
        <span className="muted entry-target"> -&gt; {entry.target}</span>
      )}
      {note && <span className="muted small entry-link-note">({note})</span>}
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

export interface EntryActions {
  onDownload: (entry: FileEntry) => void;
  onDelete: (entry: FileEntry) => void;
  onRenamed: (entry: FileEntry, path: string) => void;
}

function EntryRow({ entry, folder, onDownload, onDelete, onRenamed }: { entry: FileEntry; folder: string } & EntryActions) {
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
      <td className="files-col-modified">
        <time dateTime={entry.modified}>{formatDateTime(entry.modified)}</time>
      </td>
      <td className="files-col-mode">
        <code>{entry.mode}</code>
      </td>
      <td className="row-actions files-row-actions">
        <span className="entry-actions">
          {effectiveType(entry) !== null && (
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
      </td>
    </tr>
  );
}

/**
 * The folder's entries. Its own table (not the shared `Table`) so that, on a narrow screen,
 * the less useful columns go and each row's buttons wrap instead of scrolling out of view.
 */
export function EntryTable({
  folder,
  entries,
  busy,
  parent,
  ...actions
}: {
  folder: string;
  entries: FileEntry[];
  busy: boolean;
  /** The "Parent folder" row's link, when there is a parent. */
  parent: ReactNode;
} & EntryActions) {
  return (
    <div className="table-wrap files-table-wrap">
      <table aria-label="Files" aria-busy={busy || undefined} className="files-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Size</th>
            <th scope="col" className="files-col-modified">
              Modified
            </th>
            <th scope="col" className="files-col-mode">
              Mode
            </th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {parent && (
            <tr>
              <td colSpan={5}>
                <span className="entry-name">
                  <EntryIcon type="up" />
                  {parent}
                </span>
              </td>
            </tr>
          )}
          {entries.map((entry) => (
            <EntryRow key={entry.path} entry={entry} folder={folder} {...actions} />
          ))}
        </tbody>
      </table>
    </div>
  );
}
