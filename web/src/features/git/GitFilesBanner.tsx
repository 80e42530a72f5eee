import type { GitStackView } from "../../api/types";
import { ErrorText } from "../../components/ErrorText";
import { useGitAdmin } from "./permissions";
import { useChangeGitStack } from "./queries";
import "./git.css";

/** Whether the stack's compose file is read-only here: from git, local edits not allowed
 * (its .env and .secrets are the host's own: always editable). */
export function readOnlyFromGit(view: GitStackView | null | undefined): view is GitStackView {
  return Boolean(view && !view.local_edits);
}

/**
 * Above a git stack's editors while its files may not be edited here: where they come
 * from and what to do instead; an admin may allow local edits from here.
 */
export function GitFilesBanner({ view }: { view: GitStackView }) {
  const mayAdminister = useGitAdmin();
  const change = useChangeGitStack(view.stack);
  return (
    <div className="git-banner" role="note" aria-label="Files from git">
      <p>
        These files come from <strong>{view.repository_name}</strong> (folder{" "}
        <code>{view.path ? view.path : "/"}</code>, {view.ref}): change them in git, or allow local edits.
        The .env and .secrets below are this host's own: the repository&apos;s .env is their template.
      </p>
      {mayAdminister && (
        <div className="actions">
          <button type="button" disabled={change.isPending} onClick={() => change.mutate({ local_edits: true })}>
            Allow local edits
          </button>
        </div>
      )}
      {change.isError && <ErrorText error={change.error} />}
    </div>
  );
}
