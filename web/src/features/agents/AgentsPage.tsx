import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import { errorMessage } from "../../api/errors";
import type { Agent } from "../../api/types";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatAgo, formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { useNow } from "../../hooks/useNow";
import { useCan } from "../auth/permissions";
import { withHost } from "../hosts/host";
import { AgentDialog } from "./AgentDialog";
import { AgentRelease } from "./AgentRelease";
import { Fingerprint } from "./Fingerprint";
import { agentsQueryOptions, useDeleteAgent, useTestAgent, useUpdateAgent } from "./queries";
import { agentStatus, isHttps, missingCapabilities } from "./status";

const COLUMNS = ["Agent", "Status", "Version", "Capabilities"] as const;

/** How long ago, kept true as time passes (the list may not change for minutes). */
function When({ at }: { at: string | null }) {
  const now = useNow();
  if (!at) return <>never</>;
  return (
    <time dateTime={at} title={formatDateTime(at)}>
      {formatAgo(at, now)}
    </time>
  );
}

function StatusCell({ agent }: { agent: Agent }) {
  const status = agentStatus(agent);
  return (
    <td>
      <span className={`agent-state status tone-${status.tone}`} data-testid="agent-status">
        {status.label}
      </span>
      {status.detail && <div className="error small agent-error">{status.detail}</div>}
      {agent.enabled && (
        <div className="muted small">
          Last seen <When at={agent.last_seen_at} />
        </div>
      )}
    </td>
  );
}

/**
 * The version the agent last reported, beside whether this Stackyard can talk to it (and why
 * not), and the latest release with its update (`AgentRelease`).
 */
function VersionCell({ agent }: { agent: Agent }) {
  if (agent.version === null) {
    return (
      <td>
        <span className="muted">Not known yet</span>
        <AgentRelease agent={agent} />
      </td>
    );
  }
  return (
    <td>
      <span className="nowrap">
        {agent.version}{" "}
        {agent.compatible ? (
          <span className="pill tone-good">Compatible</span>
        ) : (
          <span className="pill tone-warn">Incompatible</span>
        )}
      </span>
      {!agent.compatible && agent.incompatibility && <div className="warn-text small">{agent.incompatibility}</div>}
      <AgentRelease agent={agent} />
    </td>
  );
}

function CapabilitiesCell({ agent }: { agent: Agent }) {
  if (agent.version === null) {
    return (
      <td>
        <span className="muted small">Known once reached</span>
      </td>
    );
  }
  const missing = missingCapabilities(agent.capabilities);
  return (
    <td className="small">
      <ul className="plain capability-list" aria-label={`Capabilities of ${agent.name}`}>
        {agent.capabilities.map((capability) => (
          <li key={capability} className="capability">
            {capability}
          </li>
        ))}
      </ul>
      {missing.length > 0 && <div className="muted">Not offered: {missing.join(", ")}</div>}
    </td>
  );
}

/** How the central trusts the agent's HTTPS certificate: the pinned fingerprint, a CA, or no TLS at all. */
function Certificate({ agent }: { agent: Agent }) {
  let content;
  if (!isHttps(agent.url)) content = <span className="muted">Plain HTTP (no TLS)</span>;
  else if (agent.trusts_ca) content = <span>Trusts a CA certificate</span>;
  else if (agent.fingerprint) {
    content = (
      <span className="fingerprint">
        Pinned: <Fingerprint value={agent.fingerprint} />
      </span>
    );
  } else content = <span className="muted">Certificate not pinned</span>;
  return <div className="small agent-certificate">{content}</div>;
}

function AgentRow({
  agent,
  mayManage,
  onEdit,
  onDelete,
}: {
  agent: Agent;
  mayManage: boolean;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const test = useTestAgent();
  const toggle = useUpdateAgent();
  return (
    <tr>
      <th scope="row">
        <div>
          {agent.name}
          {agent.enabled && (
            <Link className="small agent-stacks" to={withHost("/stacks", agent.id)}>
              Stacks
            </Link>
          )}
        </div>
        <code className="small agent-url">{agent.url}</code>
        <Certificate agent={agent} />
        {test.data && (
          <p className={`${test.data.ok ? "success" : "error"} small`} role="status">
            {test.data.ok ? "Test passed" : "Test failed"}: {test.data.detail}
          </p>
        )}
        {test.isError && (
          <p className="error small" role="alert">
            Test failed: {errorMessage(test.error)}
          </p>
        )}
        {toggle.isError && (
          <p className="error small" role="alert">
            {errorMessage(toggle.error)}
          </p>
        )}
      </th>
      <StatusCell agent={agent} />
      <VersionCell agent={agent} />
      <CapabilitiesCell agent={agent} />
      {mayManage && (
        <RowActions>
          <button type="button" aria-label={`Test ${agent.name}`} disabled={test.isPending} onClick={() => test.mutate(agent.id)}>
            {test.isPending ? "Testing…" : "Test"}
          </button>
          <button type="button" aria-label={`Edit ${agent.name}`} onClick={onEdit}>
            Edit
          </button>
          <button
            type="button"
            aria-label={`${agent.enabled ? "Disable" : "Enable"} ${agent.name}`}
            disabled={toggle.isPending}
            onClick={() =>
              toggle.mutate({
                id: agent.id,
                // The token, certificate and CA are kept (nothing given, same address).
                spec: { name: agent.name, url: agent.url, token: null, enabled: !agent.enabled },
              })
            }
          >
            {agent.enabled ? "Disable" : "Enable"}
          </button>
          <button type="button" className="danger" aria-label={`Delete ${agent.name}`} onClick={onDelete}>
            Delete
          </button>
        </RowActions>
      )}
    </tr>
  );
}

/**
 * The agents this Stackyard manages other hosts through. Everyone sees the list; admins add
 * (tested first, the HTTPS certificate pinned), edit, test, enable or disable and delete.
 */
export function AgentsPage() {
  const mayManage = useCan("agents.manage");
  const agents = useQuery(agentsQueryOptions());
  const remove = useDeleteAgent();
  const [dialog, setDialog] = useState<{ agent: Agent | null } | null>(null);
  const [deleting, setDeleting] = useState<Agent | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  return (
    <main className="page">
      <div className="page-head">
        <h1>Agents</h1>
        <div className="page-tools">
          {mayManage && (
            <button type="button" className="primary" onClick={() => setDialog({ agent: null })}>
              Add an agent
            </button>
          )}
        </div>
      </div>
      <p className="muted">
        Other hosts, managed through <code>stackyard agent</code> running there. Choose one with the host switcher on the
        Stacks, Files and Backups pages; the dashboard shows them all.
      </p>
      {message && (
        <p className="success" role="status">
          {message}
        </p>
      )}
      {agents.isError && <ErrorBanner error={agents.error} onRetry={() => void agents.refetch()} />}
      {!agents.data ? (
        !agents.isError && <Loading />
      ) : agents.data.length === 0 ? (
        <p className="muted">No agents yet.{mayManage ? " Add one to manage another host's stacks from here." : ""}</p>
      ) : (
        <div className="agents-table">
          <Table label="Agents" columns={COLUMNS} actions={mayManage}>
            {agents.data.map((agent) => (
              <AgentRow
                key={agent.id}
                agent={agent}
                mayManage={mayManage}
                onEdit={() => setDialog({ agent })}
                onDelete={() => setDeleting(agent)}
              />
            ))}
          </Table>
        </div>
      )}
      {dialog && (
        <AgentDialog
          agent={dialog.agent}
          onClose={() => setDialog(null)}
          onSaved={(saved) => {
            setDialog(null);
            setMessage(`Agent ${saved.name} saved.`);
          }}
        />
      )}
      {deleting && (
        <ConfirmDelete
          title={`Delete agent ${deleting.name}?`}
          confirmLabel="Delete the agent"
          remove={remove}
          variables={deleting.id}
          onCancel={() => setDeleting(null)}
          onDeleted={() => {
            setMessage(`Agent ${deleting.name} deleted.`);
            setDeleting(null);
          }}
        >
          <p>
            Stackyard forgets the agent, its token and its backup schedules. Nothing changes on the agent&apos;s host: its
            stacks keep running.
          </p>
        </ConfirmDelete>
      )}
    </main>
  );
}
