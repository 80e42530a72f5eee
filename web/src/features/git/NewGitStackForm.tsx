import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";
import { errorMessage } from "../../api/errors";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Field } from "../../components/Field";
import { FormActions } from "../../components/FormActions";
import { Loading } from "../../components/Loading";
import { useHost, withHost } from "../hosts/host";
import { GitSourceFields, NEW_SOURCE, type GitSource } from "./GitSourceFields";
import { gitRepositoriesQueryOptions, useCreateGitStack } from "./queries";
import "./git.css";

/**
 * Admin: a new stack of a repository folder at the ref's newest commit. The server answers
 * once the stack is deployed (through the health gate): the form says so while it waits,
 * then goes to the stack's page.
 */
export function NewGitStackForm({ onCancel }: { onCancel: () => void }) {
  const host = useHost();
  const navigate = useNavigate();
  const repositories = useQuery(gitRepositoriesQueryOptions(host));
  const create = useCreateGitStack();
  const [name, setName] = useState("");
  const [source, setSource] = useState<GitSource>(NEW_SOURCE);
  const list = repositories.data ?? [];
  // One repository: chosen already.
  const chosen = source.repository || (list.length === 1 ? (list[0]?.id ?? "") : "");

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate(
      { ...source, repository: chosen, name: name.trim(), path: source.path.trim() },
      { onSuccess: (view) => void navigate(withHost(`/stacks/${encodeURIComponent(view.stack)}`, host)) },
    );
  }

  if (repositories.isError) {
    return <ErrorBanner error={repositories.error} onRetry={() => void repositories.refetch()} />;
  }
  if (repositories.data === undefined) return <Loading />;
  if (repositories.data === null) return <p className="muted">This host does not offer stacks from git.</p>;
  return (
    <form className="form wide" onSubmit={onSubmit} aria-label="New stack from git" aria-busy={create.isPending}>
      <Field label="Name">
        <input required maxLength={200} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <GitSourceFields
        repositories={list}
        source={{ ...source, repository: chosen }}
        onChange={(patch) => setSource((s) => ({ ...s, ...patch }))}
      />
      {create.isPending && (
        <p className="console-note" role="status">
          <span className="spinner" aria-hidden="true" /> Fetching the repository and deploying the stack: this waits
          for its health gate…
        </p>
      )}
      {create.isError && (
        <pre className="error error-detail" role="alert">
          {errorMessage(create.error)}
        </pre>
      )}
      <FormActions
        label="Create and deploy"
        busyLabel="Deploying…"
        busy={create.isPending}
        disabled={list.length === 0}
        onCancel={onCancel}
      />
    </form>
  );
}
