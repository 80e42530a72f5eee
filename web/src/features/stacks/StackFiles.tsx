import { useQuery } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorMessage } from "../../api/errors";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { Loading } from "../../components/Loading";
import { stackSecretsQueryOptions, useSaveSecrets, useSaveStackFile, type StackFileKind } from "./queries";

/**
 * A text editor over a file the server holds: edits are kept while the server's copy is
 * refreshed underneath (it replaces the text only while there are no edits), and a failed
 * save keeps the text and shows the server's detail.
 */
function TextFileForm({
  label,
  content,
  rows,
  save,
}: {
  label: string;
  content: string;
  rows: number;
  save: {
    mutate: (content: string, options: { onSuccess: () => void }) => void;
    isPending: boolean;
    isError: boolean;
    error: unknown;
    reset: () => void;
  };
}) {
  const [base, setBase] = useState(content);
  const [draft, setDraft] = useState(content);
  const [saved, setSaved] = useState(false);
  const hintId = useId();
  if (content !== base) {
    // The server's copy changed: follow it unless the user has edits.
    setBase(content);
    if (draft === base) setDraft(content);
  }
  const dirty = draft !== base;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setSaved(false);
    save.mutate(draft, { onSuccess: () => setSaved(true) });
  }

  return (
    <form className="form wide" onSubmit={onSubmit} aria-label={label}>
      <Field label={label}>
        <textarea
          className="code-editor"
          rows={rows}
          spellCheck={false}
          value={draft}
          aria-describedby={hintId}
          onChange={(e) => {
            setDraft(e.target.value);
            setSaved(false);
          }}
        />
      </Field>
      <div className="actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : `Save ${label}`}
        </button>
        <button
          type="button"
          disabled={!dirty || save.isPending}
          onClick={() => {
            setDraft(base);
            setSaved(false);
            save.reset();
          }}
        >
          Revert
        </button>
        <span className="muted" id={hintId}>
          {dirty ? "Unsaved changes" : ""}
        </span>
      </div>
      {save.isError && (
        <pre className="error error-detail" role="alert">
          {errorMessage(save.error)}
        </pre>
      )}
      {saved && !save.isError && (
        <p className="success" role="status">
          {label} saved.
        </p>
      )}
    </form>
  );
}

/** A stack file shown to a role that may not edit it: selectable, not editable. */
export function ReadOnlyStackFile({ label, content, note }: { label: string; content: string; note: string }) {
  const noteId = useId();
  return (
    <div className="form wide">
      <Field label={label}>
        <textarea
          className="code-editor"
          readOnly
          rows={18}
          spellCheck={false}
          value={content}
          aria-describedby={noteId}
        />
      </Field>
      <p className="muted small" id={noteId}>
        {note}
      </p>
    </div>
  );
}

/** compose.yaml (validated by compose on save) or .env. */
export function StackFileEditor({
  stackId,
  kind,
  label,
  content,
}: {
  stackId: string;
  kind: StackFileKind;
  label: string;
  content: string;
}) {
  const save = useSaveStackFile(stackId, kind);
  return <TextFileForm label={label} content={content} rows={kind === "compose" ? 18 : 6} save={save} />;
}

/** Admin: `.secrets`, read from the server only when asked. */
export function SecretsEditor({ stackId, hasSecrets }: { stackId: string; hasSecrets: boolean }) {
  const [shown, setShown] = useState(false);
  const secrets = useQuery({ ...stackSecretsQueryOptions(stackId), enabled: shown });
  const save = useSaveSecrets(stackId);

  if (!shown) {
    return (
      <div>
        <p className="muted">
          {hasSecrets ? "This stack has a .secrets file." : "This stack has no .secrets file yet."} Its values are
          loaded only when you ask.
        </p>
        <button type="button" onClick={() => setShown(true)}>
          Show secrets
        </button>
      </div>
    );
  }
  return (
    <div>
      {secrets.isError ? (
        <ErrorText error={secrets.error} />
      ) : !secrets.data ? (
        <Loading />
      ) : (
        <TextFileForm label=".secrets" content={secrets.data.content} rows={6} save={save} />
      )}
      <div className="actions">
        <button
          type="button"
          onClick={() => {
            setShown(false);
            save.reset();
          }}
        >
          Hide secrets
        </button>
      </div>
    </div>
  );
}
