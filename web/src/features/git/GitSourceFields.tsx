import { useId } from "react";
import { Link } from "react-router";
import type { GitPolicy, GitRepository } from "../../api/types";
import { Field } from "../../components/Field";
import { useHost, withHost } from "../hosts/host";
import { POLICIES, POLICY_HELP, POLICY_LABEL } from "./outcome";
import "./git.css";

/** What makes a stack of a repository folder: the repository, its folder, the policy, local edits. */
export interface GitSource {
  repository: string;
  path: string;
  policy: GitPolicy;
  local_edits: boolean;
}

export const NEW_SOURCE: GitSource = { repository: "", path: "", policy: "auto", local_edits: false };

/**
 * The fields of a git source, shared by a new stack from git and an adoption: the host's
 * repositories to choose from (none yet: where an admin adds one), the folder, the
 * policy (each explained in a line) and whether the files may be edited here.
 */
export function GitSourceFields({
  repositories,
  source,
  onChange,
}: {
  repositories: readonly GitRepository[];
  source: GitSource;
  onChange: (patch: Partial<GitSource>) => void;
}) {
  const host = useHost();
  const folderHint = useId();
  const name = useId();
  if (repositories.length === 0) {
    return (
      <p className="muted">
        No repository yet on this host: add one in{" "}
        <Link to={withHost("/settings#git-title", host)}>Settings, Git repositories</Link>.
      </p>
    );
  }
  return (
    <>
      <Field label="Repository">
        <select required value={source.repository} onChange={(e) => onChange({ repository: e.target.value })}>
          <option value="" disabled>
            Choose a repository
          </option>
          {repositories.map((repository) => (
            <option key={repository.id} value={repository.id}>
              {repository.name} ({repository.ref})
            </option>
          ))}
        </select>
      </Field>
      <div>
        <Field label="Folder in the repository">
          <input
            maxLength={500}
            autoComplete="off"
            spellCheck={false}
            placeholder="(the repository's root)"
            aria-describedby={folderHint}
            value={source.path}
            onChange={(e) => onChange({ path: e.target.value })}
          />
        </Field>
        <p className="muted small" id={folderHint}>
          Every file in it becomes the stack&rsquo;s (its compose file, .env template, configs it mounts), e.g.{" "}
          <code>stacks/web</code>. Empty: the repository&rsquo;s root.
        </p>
      </div>
      <fieldset>
        <legend>When a commit changes the folder</legend>
        {POLICIES.map((policy) => (
          <label className="check git-choice" key={policy}>
            <input
              type="radio"
              name={name}
              value={policy}
              checked={source.policy === policy}
              onChange={() => onChange({ policy })}
            />
            <span>
              <strong>{POLICY_LABEL[policy]}</strong>: {POLICY_HELP[policy]}
            </span>
          </label>
        ))}
      </fieldset>
      <label className="check git-choice">
        <input
          type="checkbox"
          checked={source.local_edits}
          onChange={(e) => onChange({ local_edits: e.target.checked })}
        />
        <span>
          Allow local edits: the compose file and .env may be edited here (else read-only). An edited stack is never
          synced over without a confirmation.
        </span>
      </label>
    </>
  );
}
