import { useQuery, type UseQueryResult } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "../../api/errors";
import type { Agent, Channel, NotificationCatalogue, NotificationRule } from "../../api/types";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { agentsQueryOptions } from "../agents/queries";
import { MIN_SEVERITY_LABELS } from "./events";
import { channelsQueryOptions, useDeleteRule, useUpdateRule } from "./queries";
import { RuleDialog } from "./RuleDialog";
import { channelsSummary, eventsSummary, hostsSummary, ruleSpecOf, stacksSummary } from "./ruleSummary";

// "Severity": its values say it is a minimum ("Warnings and critical"); a longer name
// overlaps the next on a phone's cards.
const COLUMNS = ["Name", "Events", "Severity", "Hosts", "Stacks", "Channels", "Enabled"] as const;

function RuleRow({
  rule,
  catalogue,
  agents,
  channels,
  onEdit,
  onDelete,
}: {
  rule: NotificationRule;
  catalogue: NotificationCatalogue | undefined;
  agents: Agent[] | undefined;
  channels: Channel[] | undefined;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const toggle = useUpdateRule();
  return (
    <tr>
      <th scope="row">
        {rule.name}
        {toggle.isError && (
          <p className="error small" role="alert">
            {errorMessage(toggle.error)}
          </p>
        )}
      </th>
      <td className="detail small">{eventsSummary(rule, catalogue)}</td>
      <td>{MIN_SEVERITY_LABELS[rule.min_severity]}</td>
      <td className="small">{hostsSummary(rule, agents)}</td>
      <td className="small">{stacksSummary(rule)}</td>
      <td className="small">{channelsSummary(rule, channels)}</td>
      <td>
        <label className="check">
          <input
            type="checkbox"
            role="switch"
            aria-label={`${rule.name} enabled`}
            checked={rule.enabled}
            disabled={toggle.isPending}
            onChange={(event) => toggle.mutate({ id: rule.id, spec: { ...ruleSpecOf(rule), enabled: event.target.checked } })}
          />
          <span aria-hidden="true">{rule.enabled ? "On" : "Off"}</span>
        </label>
      </td>
      <RowActions>
        <button type="button" aria-label={`Edit rule ${rule.name}`} onClick={onEdit}>
          Edit
        </button>
        <button type="button" className="danger" aria-label={`Delete rule ${rule.name}`} onClick={onDelete}>
          Delete
        </button>
      </RowActions>
    </tr>
  );
}

/** Which events go to which channels: each rule in a line; add, edit, switch off, delete. */
export function RulesSection({
  catalogue,
  rules,
}: {
  catalogue: NotificationCatalogue | undefined;
  rules: UseQueryResult<NotificationRule[]>;
}) {
  const agents = useQuery(agentsQueryOptions());
  const channels = useQuery(channelsQueryOptions());
  const remove = useDeleteRule();
  const [dialog, setDialog] = useState<{ rule: NotificationRule | null } | null>(null);
  const [deleting, setDeleting] = useState<NotificationRule | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  return (
    <section className="card" aria-labelledby="rules-title">
      <div className="section-head">
        <h2 id="rules-title">Rules</h2>
        <button type="button" className="primary" disabled={!catalogue} onClick={() => setDialog({ rule: null })}>
          Add a rule
        </button>
      </div>
      {saved && (
        <p className="success" role="status">
          {saved}
        </p>
      )}
      {rules.isError && <ErrorBanner error={rules.error} onRetry={() => void rules.refetch()} />}
      {!rules.data ? (
        !rules.isError && <Loading />
      ) : rules.data.length === 0 ? (
        <p className="muted">No rules: nothing is sent.</p>
      ) : (
        <Table label="Rules" columns={COLUMNS} actions>
          {rules.data.map((rule) => (
            <RuleRow
              key={rule.id}
              rule={rule}
              catalogue={catalogue}
              agents={agents.data}
              channels={channels.data}
              onEdit={() => setDialog({ rule })}
              onDelete={() => setDeleting(rule)}
            />
          ))}
        </Table>
      )}
      <p className="muted small">
        A channel gets an event when an enabled rule takes it: one of the rule's events, at least as severe as its
        minimum, on one of its hosts and stacks, and the rule names that channel; a rule that names none sends to every
        channel. The rules of a first start, “Failures and warnings” and “Image updates”, send every failure, every
        warning and news of newer images to every channel: adding a channel is enough. Edit or delete them to send less.
      </p>
      {dialog && catalogue && (
        <RuleDialog
          rule={dialog.rule}
          catalogue={catalogue}
          onClose={() => setDialog(null)}
          onSaved={(rule) => {
            setDialog(null);
            setSaved(`Rule ${rule.name} saved.`);
          }}
        />
      )}
      {deleting && (
        <ConfirmDelete
          title={`Delete rule ${deleting.name}?`}
          confirmLabel="Delete the rule"
          remove={remove}
          variables={deleting.id}
          onCancel={() => setDeleting(null)}
          onDeleted={() => setDeleting(null)}
        >
          <p>What only this rule sends is no longer sent. Messages already queued still go.</p>
        </ConfirmDelete>
      )}
    </section>
  );
}
