import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "../../api/errors";
import type { Channel, NotificationCatalogue, NotificationRule } from "../../api/types";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { ChannelDialog } from "./ChannelDialog";
import { ChannelHistory } from "./ChannelHistory";
import { channelsQueryOptions, useDeleteChannel, useTestChannel, useUpdateChannel } from "./queries";

const COLUMNS = ["Name", "Kind", "Enabled", "Last success", "Last error"] as const;

/** The last error and when; muted once a later delivery or test succeeded. */
function LastError({ channel }: { channel: Channel }) {
  if (!channel.last_error) return <span className="muted">—</span>;
  const since =
    channel.last_success_at !== null &&
    channel.last_error_at !== null &&
    Date.parse(channel.last_success_at) > Date.parse(channel.last_error_at);
  return (
    <>
      <span className={since ? "muted" : "error"}>{channel.last_error}</span>
      <div className="muted small">
        {formatDateTime(channel.last_error_at)}
        {since && " (it worked since)"}
      </div>
    </>
  );
}

function ChannelRow({
  channel,
  kindLabel,
  onHistory,
  onEdit,
  onDelete,
}: {
  channel: Channel;
  kindLabel: string;
  onHistory: () => void;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const test = useTestChannel();
  const toggle = useUpdateChannel();
  const problem = test.error ?? toggle.error;
  return (
    <tr>
      <th scope="row">
        {channel.name}
        {test.data && (
          <p className={`${test.data.ok ? "success" : "error"} small`} role="status">
            {test.data.ok ? "Test passed" : "Test failed"}: {test.data.detail}
          </p>
        )}
        {problem && (
          <p className="error small" role="alert">
            {errorMessage(problem)}
          </p>
        )}
      </th>
      <td>{kindLabel}</td>
      <td>
        <label className="check">
          <input
            type="checkbox"
            role="switch"
            aria-label={`${channel.name} enabled`}
            checked={channel.enabled}
            disabled={toggle.isPending}
            onChange={(event) => toggle.mutate({ id: channel.id, change: { enabled: event.target.checked } })}
          />
          <span aria-hidden="true">{channel.enabled ? "On" : "Off"}</span>
        </label>
      </td>
      <td>
        {channel.last_success_at ? formatDateTime(channel.last_success_at) : <span className="muted">Never</span>}
      </td>
      <td className="last-error">
        <LastError channel={channel} />
      </td>
      <RowActions>
        <button
          type="button"
          aria-label={`Send test to ${channel.name}`}
          disabled={test.isPending}
          onClick={() => test.mutate(channel.id)}
        >
          {test.isPending ? "Sending…" : "Send test"}
        </button>
        <button type="button" aria-label={`History of ${channel.name}`} onClick={onHistory}>
          History
        </button>
        <button type="button" aria-label={`Edit channel ${channel.name}`} onClick={onEdit}>
          Edit
        </button>
        <button type="button" className="danger" aria-label={`Delete channel ${channel.name}`} onClick={onDelete}>
          Delete
        </button>
      </RowActions>
    </tr>
  );
}

/** Where notifications go: each channel, how its last deliveries went, its history; add, edit, delete. */
export function ChannelsSection({
  catalogue,
  rules,
}: {
  catalogue: NotificationCatalogue | undefined;
  rules: readonly NotificationRule[] | undefined;
}) {
  const channels = useQuery(channelsQueryOptions());
  const remove = useDeleteChannel();
  const [dialog, setDialog] = useState<{ channel: Channel | null } | null>(null);
  const [deleting, setDeleting] = useState<Channel | null>(null);
  const [historyOf, setHistoryOf] = useState<number | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const history = channels.data?.find((c) => c.id === historyOf) ?? null;
  const kindLabel = (channel: Channel) =>
    catalogue?.channels.find((k) => k.kind === channel.kind)?.label ?? channel.kind;
  const naming = deleting ? (rules ?? []).filter((r) => r.channels.includes(deleting.id)) : [];

  return (
    <section className="card" aria-labelledby="channels-title">
      <div className="section-head">
        <h2 id="channels-title">Channels</h2>
        <button type="button" className="primary" disabled={!catalogue} onClick={() => setDialog({ channel: null })}>
          Add a channel
        </button>
      </div>
      <p className="muted">Where notifications go: a chat, a push service, mail or a webhook of your own.</p>
      {saved && (
        <p className="success" role="status">
          {saved}
        </p>
      )}
      {channels.isError && <ErrorBanner error={channels.error} onRetry={() => void channels.refetch()} />}
      {!channels.data ? (
        !channels.isError && <Loading />
      ) : channels.data.length === 0 ? (
        <p className="muted">No channels yet: add one, and the rules below send to it.</p>
      ) : (
        <Table label="Channels" columns={COLUMNS} actions>
          {channels.data.map((channel) => (
            <ChannelRow
              key={channel.id}
              channel={channel}
              kindLabel={kindLabel(channel)}
              onHistory={() => setHistoryOf(channel.id)}
              onEdit={() => setDialog({ channel })}
              onDelete={() => setDeleting(channel)}
            />
          ))}
        </Table>
      )}
      {history && <ChannelHistory channel={history} catalogue={catalogue} onClose={() => setHistoryOf(null)} />}
      {dialog && catalogue && (
        <ChannelDialog
          channel={dialog.channel}
          catalogue={catalogue}
          onClose={() => setDialog(null)}
          onSaved={(channel) => {
            setDialog(null);
            setSaved(`Channel ${channel.name} saved.`);
          }}
        />
      )}
      {deleting && (
        <ConfirmDelete
          title={`Delete channel ${deleting.name}?`}
          confirmLabel="Delete the channel"
          remove={remove}
          variables={deleting.id}
          onCancel={() => setDeleting(null)}
          onDeleted={() => {
            if (historyOf === deleting.id) setHistoryOf(null);
            setDeleting(null);
          }}
        >
          <p>
            Stackyard forgets the channel and its stored secrets, with its queue and history: messages still waiting to go
            to it are dropped.
          </p>
          {naming.length > 0 && (
            <p>
              Rules that name it ({naming.map((r) => r.name).join(", ")}) no longer send there; one that names no other
              channel sends nothing until it is edited.
            </p>
          )}
        </ConfirmDelete>
      )}
    </section>
  );
}
