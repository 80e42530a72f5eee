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
import { agentsPageQueryOptions, useDeleteAgent, useRotateAgentKey, useTestAgent, useUpdateAgent } from "./queries";
import { agentStatus, isHttps, missingCapabilities } from "./status";
import { EditTunnelAgentDialog, TunnelAgentDialog } from "./TunnelAgentDialogs";

const COLUMNS = ["Agent", "Status", "Version", "Capabilities"] as const;

/** How each kind is named: who connects to whom. */
const KIND_LABELS: Record<Agent["kind"], string> = {
  direct: "Direct",
  tunnel: "Connects to us",
};

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

/** A moment in full ("2026-03-01 14:03:22"), how long ago on hover. */
function Since({ at }: { at: string }) {
  const now = useNow();
  return (
    <time dateTime={at} title={formatAgo(at, now)}>
      {formatDateTime(at)}
    </time>
  );
}

function StatusCell({ agent }: { agent: Agent }) {
  const status = agentStatus(agent);
  const { note, since } = status;
  return (
    <td>
      <span className={`agent-state status tone-${status.tone}`} data-testid="agent-status">
        {status.label}
      </span>
      {(note || since) && (
        <div className="muted small" data-testid="agent-status-note">
          {note}
          {note && since && " "}
          {since && (
            <>
              since <Since at={since} />
            </>
          )}
        </div>
      )}
      {agent.enabled && agent.rotating && (
        <div className="small">
          <span className="pill tone-info">Rotating its key</span>
        </div>
      )}
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

/** An agent that dials in: the fingerprint of the SSH key it authenticates with (pinned at enrolment). */
function Key({ agent }: { agent: Agent }) {
  return (
    <div className="small agent-certificate agent-key">
      {agent.key_fingerprint ? (
        <span className="fingerprint">
          Key: <code data-testid="agent-key">{agent.key_fingerprint}</code>
        </span>
      ) : (
        <span className="muted">No key yet (pinned when its host enrols)</span>
      )}
    </div>
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
  const rotate = useRotateAgentKey();
  const tunnel = agent.kind === "tunnel";
  // A rotation asks the agent through its tunnel: it must be up.
  const mayRotate = agent.enabled && agent.tunnel === "connected" && !agent.rotating;
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
        <span className={`pill tone-${tunnel ? "info" : "off"} agent-kind`} data-testid="agent-kind">
          {KIND_LABELS[agent.kind]}
        </span>
        {tunnel ? (
          <Key agent={agent} />
        ) : (
          <>
            <code className="small agent-url">{agent.url}</code>
            <Certificate agent={agent} />
          </>
        )}
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
        {rotate.isError && (
          <p className="error small" role="alert">
            Rotation failed: {errorMessage(rotate.error)}
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
          {tunnel && (
            <button
              type="button"
              aria-label={`Rotate the key of ${agent.name}`}
              title={mayRotate || agent.rotating ? undefined : "Its tunnel must be connected"}
              disabled={!mayRotate || rotate.isPending}
              onClick={() => rotate.mutate(agent.id)}
            >
              {rotate.isPending || agent.rotating ? "Rotating…" : "Rotate key"}
            </button>
          )}
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
          <button
            type="button"
            className="danger"
            aria-label={`${tunnel ? "Remove" : "Delete"} ${agent.name}`}
            onClick={onDelete}
          >
            {tunnel ? "Remove" : "Delete"}
          </button>
        </RowActions>
      )}
    </tr>
  );
}

/** What removing an agent does: an agent that dials in is revoked (its tunnel cut, its key forgotten). */
function RemovalNote({ agent }: { agent: Agent }) {
  if (agent.kind === "direct") {
    return (
      <p>
        Stackyard forgets the agent, its token and its backup schedules. Nothing changes on the agent&apos;s host: its
        stacks keep running.
      </p>
    );
  }
  return (
    <>
      <p>
        {agent.enrolled
          ? "Its tunnel is cut at once and its key forgotten: it cannot connect again. To bring its host back, add it again with a new token."
          : "Its enrolment token stops working at once: its host cannot enrol with it."}
      </p>
      <p>Stackyard forgets its backup schedules. Its stacks keep running on its host.</p>
    </>
  );
}

/**
 * The agents this Stackyard manages other hosts through: direct ones (the central connects
 * to them) and ones that connect to us (through a tunnel they dial). Everyone sees the list;
 * admins add either kind (a direct one tested first, its HTTPS certificate pinned; one that
 * connects with a one-time token), edit, test, enable or disable, rotate the key of one
 * that connects, and delete (revoke) them.
 */
export function AgentsPage() {
  const mayManage = useCan("agents.manage");
  const agents = useQuery(agentsPageQueryOptions());
  const remove = useDeleteAgent();
  const [dialog, setDialog] = useState<{ agent: Agent | null } | null>(null);
  const [connecting, setConnecting] = useState(false);
  const [deleting, setDeleting] = useState<Agent | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  return (
    <main className="page">
      <div className="page-head">
        <h1>Agents</h1>
        <div className="page-tools">
          {mayManage && (
            <>
              <button type="button" className="primary" onClick={() => setDialog({ agent: null })}>
                Add an agent
              </button>
              <button type="button" onClick={() => setConnecting(true)}>
                Add an agent that connects to us
              </button>
            </>
          )}
        </div>
      </div>
      <p className="muted">
        Other hosts, managed through <code>stackyard agent</code> running there: Stackyard connects to a direct agent;
        one behind NAT or a firewall connects to us instead. Choose one with the host switcher on the Stacks, Files and
        Backups pages; the dashboard shows them all.
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
      {dialog &&
        (dialog.agent?.kind === "tunnel" ? (
          <EditTunnelAgentDialog
            agent={dialog.agent}
            onClose={() => setDialog(null)}
            onSaved={(saved) => {
              setDialog(null);
              setMessage(`Agent ${saved.name} saved.`);
            }}
          />
        ) : (
          <AgentDialog
            agent={dialog.agent}
            onClose={() => setDialog(null)}
            onSaved={(saved) => {
              setDialog(null);
              setMessage(`Agent ${saved.name} saved.`);
            }}
          />
        ))}
      {connecting && <TunnelAgentDialog onClose={() => setConnecting(false)} />}
      {deleting && (
        <ConfirmDelete
          title={deleting.kind === "tunnel" ? `Remove and revoke agent ${deleting.name}?` : `Delete agent ${deleting.name}?`}
          confirmLabel={deleting.kind === "tunnel" ? "Remove and revoke" : "Delete the agent"}
          remove={remove}
          variables={deleting.id}
          onCancel={() => setDeleting(null)}
          onDeleted={() => {
            setMessage(`Agent ${deleting.name} ${deleting.kind === "tunnel" ? "removed and revoked" : "deleted"}.`);
            setDeleting(null);
          }}
        >
          <RemovalNote agent={deleting} />
        </ConfirmDelete>
      )}
    </main>
  );
}
