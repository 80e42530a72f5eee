import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Loading } from "../../components/Loading";
import { useHost } from "../hosts/host";
import { PreviewView } from "./DiffView";
import { GitSourceFields, NEW_SOURCE, type GitSource } from "./GitSourceFields";
import { gitRepositoriesQueryOptions, useAdoptGitStack, usePreviewAdoption } from "./queries";
import "./git.css";

/**
 * Admin: "Deploy from git…" for a stack that is not from git: pick a repository and a
 * folder, see what the stack's files would become (the diff, nothing changed yet), then
 * "Adopt" deploys the folder at the very commit the diff showed (a repository that moved on
 * meanwhile is refused: look again). Files of the stack not in the folder stay as they are.
 */
export function AdoptDialog({ stackId, onClose }: { stackId: string; onClose: () => void }) {
  const host = useHost();
  const repositories = useQuery(gitRepositoriesQueryOptions(host));
  const preview = usePreviewAdoption(stackId);
  const adopt = useAdoptGitStack(stackId);
  const [source, setSource] = useState<GitSource>({ ...NEW_SOURCE, policy: "notify" });
  const list = repositories.data ?? [];
  const chosen = source.repository || (list.length === 1 ? (list[0]?.id ?? "") : "");
  const body = { ...source, repository: chosen, path: source.path.trim() };

  function showChanges(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    adopt.reset();
    preview.mutate(body);
  }

  const title = `Deploy ${stackId} from git`;
  return (
    <Dialog title={title} onClose={onClose} className="form-dialog git-adopt">
      {repositories.isError ? (
        <ErrorText error={repositories.error} />
      ) : repositories.data === undefined ? (
        <Loading />
      ) : (
        <form className="form wide" onSubmit={showChanges} aria-label={title}>
          <p className="muted">
            The stack&rsquo;s files become the folder&rsquo;s (its .env keeps this host&rsquo;s values; files not in the
            folder stay). First see what changes.
          </p>
          <GitSourceFields
            repositories={list}
            source={{ ...source, repository: chosen }}
            onChange={(patch) => {
              setSource((s) => ({ ...s, ...patch }));
              preview.reset(); // what it showed was for the fields as they were
            }}
          />
          {preview.isError && <ErrorText error={preview.error} />}
          {preview.data && (
            <section aria-label="What adopting changes">
              <PreviewView preview={preview.data} />
            </section>
          )}
          {adopt.isPending && (
            <p className="console-note" role="status">
              <span className="spinner" aria-hidden="true" /> Deploying commit {preview.data?.commit.short} through the
              health gate…
            </p>
          )}
          {adopt.isError && <ErrorText error={adopt.error} />}
          <div className="actions dialog-actions">
            {preview.data ? (
              <button
                type="button"
                className="primary"
                disabled={adopt.isPending}
                onClick={() => {
                  const commit = preview.data?.commit.sha;
                  if (commit) adopt.mutate({ ...body, commit }, { onSuccess: onClose });
                }}
              >
                {adopt.isPending ? "Deploying…" : "Adopt"}
              </button>
            ) : (
              <button type="submit" className="primary" disabled={preview.isPending || list.length === 0}>
                {preview.isPending ? "Reading the changes…" : "Show the changes"}
              </button>
            )}
            <button type="button" onClick={onClose}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
