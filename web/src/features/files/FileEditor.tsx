import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ApiError, errorMessage } from "../../api/errors";
import { ConfirmDialog } from "../../components/Dialog";
import { Loading } from "../../components/Loading";
import { CodeEditor } from "./CodeEditor";
import { editorLanguage } from "./paths";
import { fileContentQueryOptions, useSaveFile } from "./queries";

const LANGUAGE_LABEL = { yaml: "YAML", env: "Environment (KEY=VALUE)", plain: "Plain text" } as const;

function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409;
}

/**
 * Edits one text file. Saves send back the version that was read; when the file changed on
 * the server meanwhile (409) the edits stay and "Reload" fetches the current file.
 */
export function FileEditor({
  path,
  onClose,
  onDownload,
}: {
  path: string;
  onClose: () => void;
  onDownload: () => void;
}) {
  const file = useQuery({ ...fileContentQueryOptions(path), retry: false });
  const save = useSaveFile();
  // The user's text; null while it equals the file as read.
  const [draft, setDraft] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [confirmClose, setConfirmClose] = useState(false);
  const language = editorLanguage(path);

  const text = draft ?? file.data?.content ?? "";
  const dirty = file.data !== undefined && draft !== null && draft !== file.data.content;

  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);

  function doSave() {
    if (!file.data || save.isPending) return;
    setSaved(false);
    save.mutate(
      { path: file.data.path, content: text, version: file.data.version },
      {
        onSuccess: () => {
          setDraft(null);
          setSaved(true);
        },
      },
    );
  }

  async function reload() {
    save.reset();
    setSaved(false);
    const result = await file.refetch();
    if (result.data) setDraft(null);
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
          </p>
        </>
      )}
      {save.isError && (
        <div className="error-banner" role="alert">
          <span>{errorMessage(save.error)}</span>
          {isConflict(save.error) && (
            <button type="button" onClick={() => void reload()}>
              Reload
            </button>
          )}
        </div>
      )}
      {isConflict(save.error) && (
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
            onClose();
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
