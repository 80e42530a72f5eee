import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useState, type FormEvent, type ReactNode } from "react";
import { useLocation, useNavigate } from "react-router";
import { ApiError, errorMessage, isUnauthorized } from "../../api/errors";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { Loading } from "../../components/Loading";
import {
  leaveWithoutAsking,
  peekDraft,
  saveDraft,
  takeDraft,
  useUnsavedChanges,
} from "../../components/useUnsavedChanges";
import type { LoginLocationState } from "../auth/RequireAuth";
import { CodeEditor } from "../../components/editor/CodeEditor";
import type { EditorLanguage } from "../../components/editor/codemirror";
import { useCan } from "../auth/permissions";
import { useHost } from "../hosts/host";
import type { Run } from "../../api/types";
import {
  stackRunQueryOptions,
  stackSecretsQueryOptions,
  useSaveSecrets,
  useSaveStackFile,
  useStackAction,
  type StackFileKind,
} from "./queries";

/** Prefixes the server puts before a validation error: the form's own label says it. */
const ERROR_PREFIXES = [/^Invalid compose file:\s*/i, /^Invalid \.env file:\s*/i];

/** A refused save's text under the form's label ("Invalid .env file"), without a server prefix. */
function SaveError({ error, invalidLabel }: { error: unknown; invalidLabel?: string }) {
  const refused = invalidLabel && error instanceof ApiError && error.status === 400;
  let text = errorMessage(error);
  if (refused) for (const prefix of ERROR_PREFIXES) text = text.replace(prefix, "");
  return (
    <div className="error" role="alert">
      {refused && <strong>{invalidLabel}</strong>}
      <pre className="error-detail">{text}</pre>
    </div>
  );
}

/**
 * A text editor over a file the server holds: edits are kept while the server's copy is
 * refreshed underneath (it replaces the text only while there are no edits), and a failed
 * save keeps the text and shows the server's detail (under `invalidLabel` when the server
 * refused the content). With unsaved edits, leaving the page asks first; when the session
 * expired at Save, the text is kept (`draftKey`) while the user signs in again, and put
 * back when the editor comes back.
 */
function TextFileForm({
  label,
  content,
  language,
  save,
  draftKey,
  invalidLabel,
  deploy,
  deployNote,
}: {
  label: string;
  content: string;
  language: EditorLanguage;
  draftKey?: string;
  invalidLabel?: string;
  /** Offers "Save and deploy": after a successful save, this runs (`up -d`). */
  deploy?: () => void;
  /** After "Save and deploy": what became of the deploy, said instead of "saved". */
  deployNote?: ReactNode;
  save: {
    mutate: (content: string, options: { onSuccess: () => void; onError: (error: unknown) => void }) => void;
    isPending: boolean;
    isError: boolean;
    error: unknown;
    reset: () => void;
  };
}) {
  const navigate = useNavigate();
  const location = useLocation();
  // Read without taking it (StrictMode runs initializers twice); taken once mounted.
  const [restored] = useState(() => (draftKey ? peekDraft(draftKey) : null));
  const [base, setBase] = useState(content);
  const [draft, setDraft] = useState(restored ?? content);
  const [saved, setSaved] = useState(false);
  const [deployed, setDeployed] = useState(false);
  const hintId = useId();
  if (content !== base) {
    // The server's copy changed: follow it unless the user has edits.
    setBase(content);
    if (draft === base) setDraft(content);
  }
  const dirty = draft !== base;
  useUnsavedChanges(dirty, `Your changes to ${label} are not saved. Leave and discard them?`);

  useEffect(() => {
    if (draftKey && restored !== null) takeDraft(draftKey);
  }, [draftKey, restored]);

  function doSave(thenDeploy: boolean) {
    setSaved(false);
    setDeployed(false);
    save.mutate(draft, {
      onSuccess: () => {
        setSaved(true);
        if (thenDeploy && deploy) {
          setDeployed(true);
          deploy();
        }
      },
      onError: (error) => {
        if (!isUnauthorized(error) || !draftKey) return;
        // The session expired: keep the text, sign in again, and come back to it.
        saveDraft(draftKey, draft);
        leaveWithoutAsking();
        const state: LoginLocationState = { from: `${location.pathname}${location.search}${location.hash}` };
        void navigate("/login", { replace: true, state });
      },
    });
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    doSave(false);
  }

  return (
    <form className={language === "env" ? "form wide short-editor" : "form wide"} onSubmit={onSubmit} aria-label={label}>
      <div className="field">
        <CodeEditor
          value={draft}
          language={language}
          label={label}
          onChange={(value) => {
            setDraft(value);
            setSaved(false);
          }}
          onSave={() => doSave(false)}
        />
      </div>
      <div className="actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : `Save ${label}`}
        </button>
        {deploy && (
          <button
            type="button"
            disabled={save.isPending}
            onClick={() => doSave(true)}
            title="Save, then start the stack with the saved file (compose up -d)"
          >
            Save and deploy
          </button>
        )}
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
      {restored !== null && !saved && dirty && (
        <p className="notice restored-note" role="status">
          Your unsaved changes to {label} were kept while you signed in again, and are restored here. Save to keep them.
        </p>
      )}
      {save.isError && <SaveError error={save.error} invalidLabel={invalidLabel} />}
      {saved && !save.isError && deployed && deployNote}
      {saved && !save.isError && !(deployed && deployNote) && (
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
  const host = useHost();
  const save = useSaveStackFile(stackId, kind);
  const action = useStackAction();
  const mayRun = useCan("stacks.run");
  const run = useQuery(stackRunQueryOptions(host, stackId)).data;
  return (
    <>
      <TextFileForm
        label={label}
        content={content}
        language={kind === "compose" ? "yaml" : "env"}
        deploy={mayRun ? () => action.mutate({ id: stackId, action: "start", name: "deploy" }) : undefined}
        deployNote={<DeployNote label={label} action={action} run={run} />}
        save={save}
        draftKey={host === null ? `stack:${stackId}:${kind}` : `stack@${host}:${stackId}:${kind}`}
        invalidLabel={kind === "compose" ? "Invalid compose file" : "Invalid .env file"}
      />
    </>
  );
}

/**
 * What "Save and deploy" did, followed to its end: the file saved, then the deploy that
 * started (its run, followed in the console beside), and how it ended; or why it did not
 * start.
 */
function DeployNote({
  label,
  action,
  run,
}: {
  label: string;
  action: { isPending: boolean; isError: boolean; error: unknown; data?: Run | undefined };
  run: Run | null | undefined;
}) {
  if (action.isError) {
    return (
      <div className="error" role="alert">
        {label} saved, but the deploy did not start: {errorMessage(action.error)}
      </div>
    );
  }
  const started = action.data;
  const current = started && run?.id === started.id ? run : started;
  if (!current || action.isPending) {
    return (
      <p className="console-note" role="status">
        {label} saved. Starting the deploy…
      </p>
    );
  }
  if (current.status === "running") {
    return (
      <p className="console-note" role="status">
        {label} saved. Deploying it (compose up): its progress is in the deploy console.
      </p>
    );
  }
  if (current.status === "succeeded") {
    return (
      <p className="success" role="status">
        {label} saved and deployed: compose up succeeded.
      </p>
    );
  }
  const why = current.progress.errors.join("; ");
  return (
    <p className="error" role="status">
      {label} saved, but the deploy {current.status === "partial" ? "was done in part" : "failed"}
      {why ? `: ${why}` : ""}. The deploy console has its output.
    </p>
  );
}

/** Admin: `.secrets`, read from the server only when asked. */
export function SecretsEditor({ stackId, hasSecrets }: { stackId: string; hasSecrets: boolean }) {
  const host = useHost();
  const [shown, setShown] = useState(false);
  const secrets = useQuery({ ...stackSecretsQueryOptions(host, stackId), enabled: shown });
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
        // No draft kept across a sign-in here: secret values never go to browser storage.
        <TextFileForm label=".secrets" content={secrets.data.content} language="env" save={save} />
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
