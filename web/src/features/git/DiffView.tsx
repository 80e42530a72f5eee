import type { GitFileChange, GitPreview } from "../../api/types";
import { CommitSummary } from "./CommitSummary";
import { diffLines, diffStat } from "./diff";
import "./git.css";

const CHANGE_LABEL: Record<GitFileChange["change"], string> = {
  added: "added",
  modified: "modified",
  removed: "removed",
};

/** One file's change: its path, what happens to it, and its diff with added and removed lines coloured. */
function FileDiff({ change }: { change: GitFileChange }) {
  const lines = change.diff === null ? null : diffLines(change.diff);
  const stat = lines ? diffStat(lines) : null;
  return (
    <li className="git-file-change">
      <div className="git-file-head">
        <code className="git-file-path">{change.path}</code>{" "}
        <span className={`badge git-change-${change.change}`}>{CHANGE_LABEL[change.change]}</span>
        {stat && (
          <span className="muted small">
            {" "}
            +{stat.added} −{stat.removed}
          </span>
        )}
      </div>
      {lines === null ? (
        <p className="muted small">Not shown: a binary file, or too large to show.</p>
      ) : (
        <pre className="git-diff" aria-label={`Diff of ${change.path}`} tabIndex={0}>
          {lines.map((line, index) => (
            <span key={index} className={`diff-line diff-${line.kind}`}>
              {line.text}
              {"\n"}
            </span>
          ))}
        </pre>
      )}
    </li>
  );
}

/** The files a change touches, each with its diff; said plainly when there are none. */
export function ChangeList({ changes }: { changes: readonly GitFileChange[] }) {
  if (changes.length === 0) {
    return <p className="muted">No file of the stack changes.</p>;
  }
  return (
    <ul className="plain git-changes" aria-label="Changed files">
      {changes.map((change) => (
        <FileDiff key={change.path} change={change} />
      ))}
    </ul>
  );
}

/** A preview: the commit it is of, and what it would change in the stack's folder. */
export function PreviewView({ preview }: { preview: GitPreview }) {
  return (
    <div className="git-preview">
      <p>
        Commit <CommitSummary commit={preview.commit} />
      </p>
      <ChangeList changes={preview.changes} />
    </div>
  );
}
