import { useId, useState, type FormEvent } from "react";
import type { GitAuth, GitRepository, GitRepositorySpec } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { FormActions } from "../../components/FormActions";
import { useSaveRepository } from "./queries";
import { joinTrustedKeys, splitTrustedKeys } from "./trustedKeys";
import "./git.css";

export const AUTH_LABEL: Record<GitAuth, string> = {
  none: "None (a public repository)",
  token: "HTTPS token",
  ssh_key: "SSH deploy key",
};

const AUTH_HELP: Record<GitAuth, string> = {
  none: "For a public repository, over https:// or git://.",
  token: "A token (or password) sent over https:// with a user name; kept sealed, never shown again.",
  ssh_key:
    "Over ssh:// or git@host:path. Stackyard makes the key when you save and shows its public half, to add at the git host as a read-only deploy key. The server's host key is pinned at the first contact.",
};

/** Poll seconds: 0 (never) or at least this (the server's floor). */
const MIN_POLL = 10;

/**
 * Add a repository (`repository` null) or change one. The token is write-only: on an edit
 * an empty field keeps the kept one. Signed commits: the trusted keys are typed one entry
 * each (an SSH key per line, or an OpenPGP block).
 */
export function RepositoryDialog({
  repository,
  onClose,
  onSaved,
}: {
  repository: GitRepository | null;
  onClose: () => void;
  onSaved: (saved: GitRepository) => void;
}) {
  const editing = repository !== null;
  const save = useSaveRepository();
  const [name, setName] = useState(repository?.name ?? "");
  const [url, setUrl] = useState(repository?.url ?? "");
  const [ref, setRef] = useState(repository?.ref ?? "main");
  const [auth, setAuth] = useState<GitAuth>(repository?.auth ?? "none");
  const [username, setUsername] = useState(repository?.username ?? "git");
  const [token, setToken] = useState("");
  const [poll, setPoll] = useState(String(repository?.poll_seconds ?? 300));
  const [requireSigned, setRequireSigned] = useState(repository?.require_signed ?? false);
  const [keys, setKeys] = useState(joinTrustedKeys(repository?.trusted_keys ?? []));
  const authHelpId = useId();
  const tokenHelpId = useId();
  const pollHelpId = useId();
  const keysHelpId = useId();
  const tokenKept = editing && repository.auth === "token" && repository.has_token;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const spec: GitRepositorySpec = {
      name: name.trim(),
      url: url.trim(),
      ref: ref.trim(),
      auth,
      username: username.trim() || "git",
      token: auth === "token" && token ? token : null,
      poll_seconds: Number(poll),
      require_signed: requireSigned,
      trusted_keys: splitTrustedKeys(keys),
    };
    save.mutate({ id: repository?.id ?? null, spec }, { onSuccess: onSaved });
  }

  const title = editing ? `Edit ${repository.name}` : "Add a repository";
  return (
    <Dialog title={title} onClose={onClose} className="form-dialog">
      <form className="form" onSubmit={submit} aria-label={title}>
        <Field label="Name">
          <input required maxLength={100} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Repository address">
          <input
            required
            maxLength={2000}
            autoComplete="off"
            spellCheck={false}
            placeholder="https://git.example.com/owner/stacks.git"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
          />
        </Field>
        <Field label="Branch or tag">
          <input required maxLength={200} autoComplete="off" spellCheck={false} value={ref} onChange={(e) => setRef(e.target.value)} />
        </Field>
        <div>
          <Field label="Sign-in">
            <select value={auth} aria-describedby={authHelpId} onChange={(e) => setAuth(e.target.value as GitAuth)}>
              {(Object.keys(AUTH_LABEL) as GitAuth[]).map((value) => (
                <option key={value} value={value}>
                  {AUTH_LABEL[value]}
                </option>
              ))}
            </select>
          </Field>
          <p className="muted small" id={authHelpId}>
            {AUTH_HELP[auth]}
          </p>
        </div>
        {auth === "token" && (
          <>
            <Field label="User name">
              <input
                maxLength={200}
                autoComplete="off"
                spellCheck={false}
                value={username}
                onChange={(e) => setUsername(e.target.value)}
              />
            </Field>
            <div>
              <Field label="Token">
                <input
                  type="password"
                  autoComplete="new-password"
                  spellCheck={false}
                  maxLength={4000}
                  required={!tokenKept}
                  placeholder={tokenKept ? "kept (leave empty to keep it)" : undefined}
                  aria-describedby={tokenHelpId}
                  value={token}
                  onChange={(e) => setToken(e.target.value)}
                />
              </Field>
              <p className="muted small" id={tokenHelpId}>
                {tokenKept
                  ? "A token is kept: it is never shown. Leave this empty to keep it, or type a new one to replace it."
                  : "Write-only: kept sealed and never shown again. Git hosts take any user name with a token."}
              </p>
            </div>
          </>
        )}
        <div>
          <Field label="Poll every (seconds)">
            <input
              type="number"
              required
              min={0}
              max={7 * 24 * 3600}
              step={1}
              aria-describedby={pollHelpId}
              value={poll}
              onChange={(e) => setPoll(e.target.value)}
            />
          </Field>
          <p className="muted small" id={pollHelpId}>
            0: fetched only by a webhook or by hand (Sync now); else at least every {MIN_POLL} seconds.
          </p>
        </div>
        <label className="check git-choice">
          <input type="checkbox" checked={requireSigned} onChange={(e) => setRequireSigned(e.target.checked)} />
          <span>Require signed commits: deploy only commits signed by one of the trusted keys</span>
        </label>
        {requireSigned && (
          <div>
            <Field label="Trusted keys">
              <textarea
                className="mono"
                rows={5}
                spellCheck={false}
                required
                aria-describedby={keysHelpId}
                value={keys}
                onChange={(e) => setKeys(e.target.value)}
              />
            </Field>
            <p className="muted small" id={keysHelpId}>
              One key per entry: an SSH public key per line (<code>ssh-ed25519 AAAA… name</code>), or an OpenPGP public
              key block from its BEGIN line to its END line.
            </p>
          </div>
        )}
        {save.isError && <ErrorText error={save.error} />}
        <FormActions
          label={editing ? "Save changes" : "Add the repository"}
          busyLabel="Saving…"
          busy={save.isPending}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}
