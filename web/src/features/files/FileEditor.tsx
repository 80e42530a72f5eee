import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useLocation, useNavigate } from "react-router";
import { ApiError, errorMessage, isUnauthorized } from "../../api/errors";
import { ConfirmDialog } from "../../components/Dialog";
import { Loading } from "../../components/Loading";
import { peekDraft, saveDraft, takeDraft, useUnsavedChanges } from "../../components/useUnsavedChanges";
import type { LoginLocationState } from "../auth/RequireAuth";
import type { HostId } from "../../api/hosts";
import { useHost } from "../hosts/host";
import { CodeEditor } from "../../components/editor/CodeEditor";
import { editorLanguage } from "./paths";
import { fileContentQueryOptions, useSaveFile } from "./queries";

const LANGUAGE_LABEL = { yaml: "YAML", env: "Environment (KEY=VALUE)", plain: "Plain text" } as const;

function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409;
}

/** Where the text of a file on `host` is kept while its editor signs in again. */
export function draftKey(path: string, host: HostId = null): string {
  return host === null ? `files:${path}` : `files@${host}:${path}`;
}

interface Draft {
  text: string;
  /** The version the text was based on. */
  version: string;
}

function readDraft(path: string, host: HostId): Draft | null {
  const raw = peekDraft(draftKey(path, host));
  if (raw === null) return null;
  try {
    const draft = JSON.parse(raw) as Partial<Draft>;
    return typeof draft.text === "string" ? { text: draft.text, version: String(draft.version ?? "") } : null;
  } catch {
    return null;
  }
}

/** What the status line says besides the language. */
type Notice = { tone: "info" | "warning"; text: string } | null;

/**
 * Edits one text file. Saves send back the version that was read; when the file changed on
 * the server meanwhile (409) the edits stay and "Reload" fetches the current file.
 *
 * Unsaved edits are not lost silently: leaving (another file, the sidebar, closing the tab)
 * asks first; a save refused because the session expired keeps the text for this tab, sends
 * the user to sign in, and puts the text back when the file is opened again. `replaced`
 * changes when an upload replaced the file: it is reloaded, or marked "changed on disk"
 * when there are edits.
 */
export function FileEditor({
  path,
  replaced = 0,
  onClose,
  onDownload,
}: {
  path: string;
  replaced?: number;
  onClose: () => void;
  onDownload: () => void;
}) {
  const host = useHost();
  const file = useQuery({ ...fileContentQueryOptions(host, path), retry: false });
  const save = useSaveFile();
  const navigate = useNavigate();
  const location = useLocation();
  // The user's text; null while it equals the file as read.
  const [draft, setDraft] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [confirmClose, setConfirmClose] = useState(false);
  const [notice, setNotice] = useState<Notice>(null);
  const [changedOnDisk, setChangedOnDisk] = useState(false);
  // Set once the user chose to leave (discard, sign in again): nothing more to ask.
  const [leaving, setLeaving] = useState<null | (() => void)>(null);
  const language = editorLanguage(path);

  const text = draft ?? file.data?.content ?? "";
  const dirty = file.data !== undefined && draft !== null && draft !== file.data.content;

  useUnsavedChanges(dirty && leaving === null, `Your changes to ${path} have not been saved. Leave and discard them?`);

  useEffect(() => {
    leaving?.();
  }, [leaving]);

  // Text kept while the user signed in again: put it back once the file is read (and
  // forget it then: it comes back once).
  const [restoring, setRestoring] = useState(true);
  if (restoring && file.data) {
    setRestoring(false);
    const kept = readDraft(path, host);
    if (kept && kept.text !== file.data.content) {
      setDraft(kept.text);
      setNotice({
        tone: "info",
        text:
          kept.version === file.data.version
            ? "Your unsaved changes from before you signed in again are back. Review them and save."
            : "Your unsaved changes from before you signed in again are back, but the file changed on the server since: saving replaces those changes.",
      });
    }
  }
  useEffect(() => {
    if (!restoring) takeDraft(draftKey(path, host));
  }, [restoring, path, host]);

  // An upload replaced the file: with edits, it is marked "changed on disk"; else reloaded.
  const [seenReplaced, setSeenReplaced] = useState(replaced);
  const [reloading, setReloading] = useState(false);
  if (replaced !== seenReplaced) {
    setSeenReplaced(replaced);
    setSaved(false);
    if (dirty) setChangedOnDisk(true);
    else setReloading(true);
  }
  const { refetch } = file;
  useEffect(() => {
    if (!reloading) return;
    void refetch().then((result) => {
      setReloading(false);
      if (!result.data) return;
      setDraft(null);
      setChangedOnDisk(false);
      setNotice({ tone: "info", text: "Reloaded: an upload replaced this file." });
    });
  }, [reloading, refetch]);

  function doSave() {
    if (!file.data || save.isPending) return;
    setSaved(false);
    setNotice(null);
    const version = file.data.version;
    save.mutate(
      { path: file.data.path, content: text, version },
      {
        onSuccess: () => {
          setDraft(null);
          setSaved(true);
          setChangedOnDisk(false);
        },
        onError: (err) => {
          if (!isUnauthorized(err)) return;
          // The session expired: keep the text, sign in again, come back to it.
          saveDraft(draftKey(path, host), JSON.stringify({ text, version } satisfies Draft));
          const state: LoginLocationState = { from: `${location.pathname}${location.search}${location.hash}` };
          setLeaving(() => () => void navigate("/login", { state }));
        },
      },
    );
  }

  async function reload() {
    save.reset();
    setSaved(false);
    setNotice(null);
    const result = await file.refetch();
    if (result.data) {
      setDraft(null);
      setChangedOnDisk(false);
    }
  }

  function close() {
    if (dirty) setConfirmClose(true);
    else onClose();
  }

  return (
    <section className="card file-editor" aria-labelledby="file-editor-title">
      <div className="card-tools">
        <h2 id="file-editor-title" className="file-editor-title">
          <code>{path}</code>
        </h2>
        <div className="actions">
          {file.data && (
            <button type="button" className="primary" disabled={save.isPending} onClick={doSave}>
              {save.isPending ? "Saving…" : "Save"}
            </button>
          )}
          <button type="button" onClick={close}>
            Close
          </button>
        </div>
      </div>
      {file.isError ? (
        <div className="error-banner" role="alert">
          <span>{errorMessage(file.error)}</span>
          <span className="actions">
            {file.error instanceof ApiError && file.error.status === 400 && (
              <button type="button" onClick={onDownload}>
                Download
              </button>
            )}
            <button type="button" onClick={() => void file.refetch()}>
              Retry
            </button>
          </span>
        </div>
      ) : !file.data ? (
        <Loading />
      ) : (
        <>
          <CodeEditor
            key={file.data.path}
            value={text}
            language={language}
            label={`Contents of ${path}`}
            onChange={(value) => {
              setDraft(value);
              setSaved(false);
            }}
            onSave={doSave}
          />
          <p className="muted small editor-status">
            {LANGUAGE_LABEL[language]}
            {dirty ? " · Unsaved changes" : ""}
            {changedOnDisk ? " · Changed on disk" : ""}
          </p>
        </>
      )}
      {changedOnDisk && (
        <div className="error-banner" role="alert">
          <span>
            Changed on disk: an upload replaced <code>{path}</code> while you were editing it. Saving now is refused;
            Reload reads the new file (your changes here are dropped).
          </span>
          <button type="button" onClick={() => void reload()}>
            Reload
          </button>
        </div>
      )}
      {notice && (
        <p className={notice.tone === "warning" ? "error" : "muted small"} role="status">
          {notice.text}
        </p>
      )}
      {save.isError && !isUnauthorized(save.error) && (
        <div className="error-banner" role="alert">
          <span>{errorMessage(save.error)}</span>
          {isConflict(save.error) && !changedOnDisk && (
            <button type="button" onClick={() => void reload()}>
              Reload
            </button>
          )}
        </div>
      )}
      {isConflict(save.error) && !changedOnDisk && (
        <p className="muted small">Reload reads the file as it is now; the changes made here are dropped.</p>
      )}
      {saved && !save.isError && (
        <p className="success" role="status">
          Saved.
        </p>
      )}
      {confirmClose && (
        <ConfirmDialog
          title="Discard unsaved changes?"
          confirmLabel="Discard"
          cancelLabel="Keep editing"
          danger
          onConfirm={() => {
            setConfirmClose(false);
            setLeaving(() => onClose);
          }}
          onCancel={() => setConfirmClose(false)}
        >
          <p>
            Your changes to <code>{path}</code> have not been saved.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
