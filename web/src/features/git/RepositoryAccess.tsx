import { useState } from "react";
import { pageOrigin } from "../../api/client";
import type { GitRepository, GitWebhook } from "../../api/types";
import { ConfirmButton } from "../../components/ConfirmButton";
import { CopyButton } from "../../components/CopyButton";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { useHost } from "../hosts/host";
import { useHostKey, useNewDeployKey, useNewWebhook } from "./queries";
import { webhookUrl } from "./webhook";

/**
 * A new webhook's address and secret, shown this once (the server keeps the secret sealed
 * and never answers it again): each with a Copy button, and where they go at the git host.
 */
export function NewWebhook({ webhook }: { webhook: GitWebhook }) {
  const host = useHost();
  const url = webhookUrl(pageOrigin(), webhook.path, host);
  return (
    <div className="notice" role="region" aria-label="New webhook">
      <p>
        Paste both at the git host as a <strong>push</strong> webhook of the repository, content type{" "}
        <code>application/json</code>: at GitHub, Gitea or Forgejo the address is the Payload URL (Target URL) and the
        secret its Secret; at GitLab the address is the URL and the secret its Secret token.
      </p>
      <p>
        <strong>Copy the secret now: it will not be shown again.</strong> A new webhook makes another, and this one then
        stops working.
      </p>
      <p className="token-row">
        <span>Address</span>
        <code className="token" data-testid="webhook-url">
          {url}
        </code>
        <CopyButton text={url} label="Copy the webhook's address" />
      </p>
      <p className="token-row">
        <span>Secret</span>
        <code className="token" data-testid="webhook-secret">
          {webhook.secret}
        </code>
        <CopyButton text={webhook.secret} label="Copy the webhook's secret" />
      </p>
    </div>
  );
}

function WebhookPart({ repository }: { repository: GitRepository }) {
  const make = useNewWebhook();
  // Kept only while this dialog is open: it is not asked for again, nor put in any cache.
  const [made, setMade] = useState<GitWebhook | null>(null);
  const create = () => make.mutate(repository.id, { onSuccess: setMade });
  return (
    <section aria-labelledby={`webhook-${repository.id}`}>
      <h3 id={`webhook-${repository.id}`}>Webhook</h3>
      {made ? (
        <NewWebhook webhook={made} />
      ) : (
        <p className="muted">
          {repository.webhook
            ? "A webhook secret is set (it was shown once, when it was made). A new webhook replaces it."
            : "No webhook yet: a push reaches Stackyard at the next poll, or when someone syncs by hand."}
        </p>
      )}
      <div className="actions">
        {repository.webhook || made ? (
          <ConfirmButton
            label="New webhook"
            disabled={make.isPending}
            onConfirm={create}
            warning="The current secret stops working: paste the new one at the git host too."
          >
            New webhook
          </ConfirmButton>
        ) : (
          <button type="button" disabled={make.isPending} onClick={create}>
            New webhook
          </button>
        )}
      </div>
      {make.isError && <ErrorText error={make.error} />}
    </section>
  );
}

function DeployKeyPart({ repository }: { repository: GitRepository }) {
  const renew = useNewDeployKey();
  return (
    <section aria-labelledby={`deploy-key-${repository.id}`}>
      <h3 id={`deploy-key-${repository.id}`}>Deploy key</h3>
      {repository.public_key ? (
        <>
          <p>Add it to the repository at the git host as a read-only deploy key:</p>
          <code className="git-key" data-testid="deploy-key">
            {repository.public_key}
          </code>
          <div className="actions">
            <CopyButton text={repository.public_key} label="Copy the deploy key" />
          </div>
        </>
      ) : (
        <p className="muted">No deploy key yet.</p>
      )}
      <div className="actions">
        <ConfirmButton
          label="New deploy key"
          disabled={renew.isPending}
          onConfirm={() => renew.mutate(repository.id)}
          warning="The current key stops working here: add the new one at the git host, and remove the old one there."
        >
          New deploy key
        </ConfirmButton>
      </div>
      {renew.isError && <ErrorText error={renew.error} />}
    </section>
  );
}

function HostKeyPart({ repository }: { repository: GitRepository }) {
  const change = useHostKey();
  const fingerprint = repository.host_key_fingerprint;
  return (
    <section aria-labelledby={`host-key-${repository.id}`}>
      <h3 id={`host-key-${repository.id}`}>SSH host key</h3>
      {fingerprint ? (
        <p className="fingerprint">
          Pinned: <code data-testid="host-key-fingerprint">{fingerprint}</code>. A server that shows another key is
          refused.
        </p>
      ) : (
        <p className="warn-text">
          No host key is pinned: fetches are refused until one is. Pinning takes the key the server shows now.
        </p>
      )}
      <div className="actions">
        {fingerprint ? (
          <ConfirmButton
            label="Forget host key"
            disabled={change.isPending}
            onConfirm={() => change.mutate({ id: repository.id, pin: false })}
            warning="Only when the server's key was changed on purpose. Check the new key's fingerprint with the server's owner before you pin it: a key nobody checked may be an impostor's."
          >
            Forget host key
          </ConfirmButton>
        ) : (
          <ConfirmButton
            label="Pin host key"
            disabled={change.isPending}
            onConfirm={() => change.mutate({ id: repository.id, pin: true })}
            warning="Pins the key the server shows now. Then check its fingerprint (shown here) with the server's owner: a key nobody checked may be an impostor's."
          >
            Pin host key
          </ConfirmButton>
        )}
      </div>
      {change.isError && <ErrorText error={change.error} />}
    </section>
  );
}

/** Whether a repository's address is SSH (`ssh://…` or `user@host:path`), as the server tells. */
export function isSshAddress(url: string): boolean {
  return url.startsWith("ssh://") || /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:/.test(url);
}

/**
 * Admin: a repository's webhook (a new one shown once), its deploy key's public half (an
 * SSH one) and its pinned host key. `repository` is read from the list, so each change shows.
 */
export function RepositoryAccessDialog({ repository, onClose }: { repository: GitRepository; onClose: () => void }) {
  return (
    <Dialog title={`Webhook and keys of ${repository.name}`} onClose={onClose} className="form-dialog">
      <div className="git-repo-details">
        <WebhookPart repository={repository} />
        {repository.auth === "ssh_key" && <DeployKeyPart repository={repository} />}
        {isSshAddress(repository.url) && <HostKeyPart repository={repository} />}
      </div>
      <div className="actions dialog-actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
