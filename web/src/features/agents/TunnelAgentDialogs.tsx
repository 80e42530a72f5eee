import { useQuery } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import type { Agent, NewTunnelAgent } from "../../api/types";
import { CopyButton } from "../../components/CopyButton";
import { ConfirmDialog, Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { FormActions } from "../../components/FormActions";
import { formatDateTime } from "../../components/format";
import { useUnsavedChanges } from "../../components/useUnsavedChanges";
import { useNow } from "../../hooks/useNow";
import { agentsPageQueryOptions, useCreateTunnelAgent, useUpdateAgent } from "./queries";

export const ADD_TUNNEL_TITLE = "Add an agent that connects to us";
const LEAVE = "The enrolment token is not shown again. Leave without having used or copied it?";

/** Where the new agent is, as the list (asked every few seconds while it settles) says. */
function EnrolmentProgress({ made, agent }: { made: NewTunnelAgent; agent: Agent | undefined }) {
  const now = useNow(5_000);
  if (!agent) {
    return (
      <p className="error" role="alert">
        The agent was removed: its token no longer works.
      </p>
    );
  }
  if (agent.tunnel === "connected") {
    return (
      <p className="success" role="status">
        {agent.name} enrolled and connected{agent.version ? ` (Stackyard ${agent.version})` : ""}.
      </p>
    );
  }
  if (agent.enrolled) {
    return (
      <p className="success" role="status">
        {agent.name} enrolled: its key is pinned; waiting for its tunnel…
      </p>
    );
  }
  if (Date.parse(made.expires_at) <= now) {
    return (
      <p className="error" role="alert">
        The token expired unused: remove {agent.name} and add it again for a new one.
      </p>
    );
  }
  return (
    <p className="busy" role="status">
      <span className="spinner" aria-hidden="true" /> Waiting for its host to enrol…
    </p>
  );
}

/**
 * What the new agent's host runs, shown this once (the server keeps only the token's
 * hash): the command, the same as a compose service, and the token alone, each with a Copy
 * button; then the agent's progress as the list reads it. Closing before the host enrolled
 * asks first, and so does leaving the page: nothing shows the token again.
 */
function EnrolmentToken({ made, onClose }: { made: NewTunnelAgent; onClose: () => void }) {
  const warningId = useId();
  const agents = useQuery(agentsPageQueryOptions());
  const agent = agents.data ? agents.data.find((a) => a.id === made.agent.id) : made.agent;
  const pending = agent !== undefined && !agent.enrolled;
  const [confirming, setConfirming] = useState(false);
  useUnsavedChanges(pending, LEAVE);
  const close = () => (pending ? setConfirming(true) : onClose());
  return (
    <Dialog title={ADD_TUNNEL_TITLE} onClose={close} describedBy={warningId} className="form-dialog enrolment">
      <p className="success">Agent {made.agent.name} added.</p>
      <p id={warningId}>
        <strong>
          Copy the command now: its token is not shown again. It works once, until{" "}
          <time dateTime={made.expires_at}>{formatDateTime(made.expires_at)}</time>.
        </strong>{" "}
        Removing the agent revokes it.
      </p>
      <section className="enrol-part" aria-label="Command">
        <p className="muted small">
          Run on the agent&apos;s host (it needs Docker and reaches this Stackyard&apos;s address; through a proxy when{" "}
          <code>HTTPS_PROXY</code> is set):
        </p>
        <div className="token-row">
          <code className="token" data-testid="enrol-command">
            {made.command}
          </code>
          <CopyButton text={made.command} label="Copy the command" />
        </div>
      </section>
      <section className="enrol-part" aria-label="Compose file">
        <p className="muted small">Or as a compose service:</p>
        <pre className="token enrol-compose" data-testid="enrol-compose">
          {made.compose}
        </pre>
        <CopyButton text={made.compose} label="Copy the compose file" />
      </section>
      <section className="enrol-part" aria-label="Token">
        <p className="muted small">The token alone:</p>
        <div className="token-row">
          <code className="token" data-testid="enrol-token">
            {made.token}
          </code>
          <CopyButton text={made.token} label="Copy the token" />
        </div>
      </section>
      <EnrolmentProgress made={made} agent={agent} />
      <div className="actions dialog-actions">
        <button type="button" className="primary" onClick={close}>
          Close
        </button>
      </div>
      {confirming && (
        <ConfirmDialog
          title="Close without the token?"
          confirmLabel="Close"
          cancelLabel="Keep it open"
          onCancel={() => setConfirming(false)}
          onConfirm={onClose}
        >
          <p>
            The token and the command are not shown again. If its host has not run them yet, remove {made.agent.name}{" "}
            and add it again for a new token.
          </p>
        </ConfirmDialog>
      )}
    </Dialog>
  );
}

/**
 * Add an agent that dials this Stackyard (a host it cannot reach: behind NAT, on a laptop,
 * in another network). A name is all it takes; the answer's one-time token, with the
 * command to run, is shown once (`EnrolmentToken`).
 */
export function TunnelAgentDialog({ onClose }: { onClose: () => void }) {
  const create = useCreateTunnelAgent();
  const [name, setName] = useState("");

  if (create.data) return <EnrolmentToken made={create.data} onClose={onClose} />;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate(name.trim());
  }

  return (
    <Dialog title={ADD_TUNNEL_TITLE} onClose={onClose} className="form-dialog">
      <form className="form" onSubmit={submit} aria-label={ADD_TUNNEL_TITLE}>
        <p className="muted small">
          For a host this Stackyard cannot reach (behind NAT, on a laptop, in another network): the agent there
          connects to this Stackyard&apos;s own address and keeps the connection up. You get a one-time token and the
          command to run on that host.
        </p>
        <Field label="Name">
          <input required maxLength={100} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        {create.isError && <ErrorText error={create.error} />}
        <FormActions label="Make its token" busyLabel="Making…" busy={create.isPending} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/**
 * Edit an agent that dials in: its name and whether it is enabled (its address is its own
 * tunnel and its credential its key, so there is nothing else to change). Disabled, its
 * tunnel is dropped; enabled again, it is let back in when it next dials.
 */
export function EditTunnelAgentDialog({
  agent,
  onClose,
  onSaved,
}: {
  agent: Agent;
  onClose: () => void;
  onSaved: (saved: Agent) => void;
}) {
  const update = useUpdateAgent();
  const [name, setName] = useState(agent.name);
  const [enabled, setEnabled] = useState(agent.enabled);
  const title = `Edit ${agent.name}`;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    update.mutate(
      // The server takes only the name and `enabled` of an agent that dials in.
      { id: agent.id, spec: { name: name.trim(), url: agent.url, token: null, enabled } },
      { onSuccess: onSaved },
    );
  }

  return (
    <Dialog title={title} onClose={onClose} className="form-dialog">
      <form className="form" onSubmit={submit} aria-label={title}>
        <p className="muted small">An agent that connects to us: its key is its credential (rotate it from the list).</p>
        <Field label="Name">
          <input required maxLength={100} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <label className="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          <span>Enabled (disabled, its tunnel is dropped until it is enabled again)</span>
        </label>
        {update.isError && <ErrorText error={update.error} />}
        <FormActions label="Save changes" busyLabel="Saving…" busy={update.isPending} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
