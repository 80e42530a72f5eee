import type { GitCommit } from "../../api/types";
import { formatAgo, formatDateTime } from "../../components/format";

/** A commit's short sha: a link to its page at the git host when that is known. */
export function CommitSha({ commit }: { commit: GitCommit }) {
  const sha = <code title={commit.sha}>{commit.short}</code>;
  if (!commit.url) return sha;
  return (
    <a href={commit.url} target="_blank" rel="noreferrer noopener" aria-label={`Commit ${commit.short} at the git host`}>
      {sha}
    </a>
  );
}

/** A commit in one line: short sha, subject, author and when. */
export function CommitSummary({ commit }: { commit: GitCommit }) {
  return (
    <span className="git-commit">
      <CommitSha commit={commit} /> <span className="git-subject">{commit.subject}</span>{" "}
      <span className="muted small">
        by {commit.author},{" "}
        <time dateTime={commit.at} title={formatDateTime(commit.at)}>
          {formatAgo(commit.at)}
        </time>
      </span>
    </span>
  );
}
