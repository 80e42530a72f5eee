import { useQuery } from "@tanstack/react-query";
import type { Channel, Delivery, NotificationCatalogue, NotificationSeverity } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { Table } from "../../components/Table";
import type { Tone } from "../../components/tone";
import { eventTitle, SEVERITY_LABELS } from "./events";
import { deliveriesQueryOptions, HISTORY_LIMIT } from "./queries";

const COLUMNS = ["Event", "Host", "Stack", "Text", "When", "Status"] as const;

const SEVERITY_TONES: Record<NotificationSeverity, Tone> = { info: "info", warning: "warn", critical: "bad" };

/** How many deliveries went out in each message (a digest carries several), by message. */
export function messageSizes(deliveries: readonly Delivery[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const d of deliveries) {
    if (d.message) sizes.set(d.message, (sizes.get(d.message) ?? 0) + 1);
  }
  return sizes;
}

function attempts(n: number): string {
  return n === 1 ? "1 attempt" : `${n} attempts`;
}

/** Sent, failed (and why) or waiting, with its tries, and the digest it went out in. */
export function deliveryStatus(delivery: Delivery): string {
  switch (delivery.status) {
    case "sent":
      return delivery.attempts > 1 ? `Sent (${attempts(delivery.attempts)})` : "Sent";
    case "failed":
      return `Failed after ${attempts(delivery.attempts)}`;
    case "pending":
      return delivery.attempts > 0 ? `Pending (${attempts(delivery.attempts)} so far)` : "Pending";
    default:
      return delivery.status;
  }
}

const STATUS_TONES: Record<string, Tone> = { sent: "good", failed: "bad", pending: "warn" };

function DeliveryRow({
  delivery,
  catalogue,
  digest,
}: {
  delivery: Delivery;
  catalogue: NotificationCatalogue | undefined;
  digest: number;
}) {
  return (
    <tr>
      <td>
        {delivery.ended && "Resolved: "}
        {eventTitle(catalogue, delivery.event)}
        <div className={`severity tone-${delivery.ended ? "good" : SEVERITY_TONES[delivery.severity]}`}>
          {SEVERITY_LABELS[delivery.severity]}
        </div>
      </td>
      <td>{delivery.host}</td>
      <td>{delivery.stack ?? <span className="muted">—</span>}</td>
      <td className="detail">{delivery.text}</td>
      <td>{formatDateTime(delivery.at)}</td>
      <td>
        <span className={`status tone-${STATUS_TONES[delivery.status] ?? "off"}`}>{deliveryStatus(delivery)}</span>
        {delivery.sent_at && delivery.status === "sent" && (
          <div className="muted small">{formatDateTime(delivery.sent_at)}</div>
        )}
        {digest > 1 && <div className="muted small">in a digest of {digest}</div>}
        {delivery.error && <div className="error small">{delivery.error}</div>}
      </td>
    </tr>
  );
}

/** A channel's last deliveries, newest first: each event, where and when, how it went. */
export function ChannelHistory({
  channel,
  catalogue,
  onClose,
}: {
  channel: Channel;
  catalogue: NotificationCatalogue | undefined;
  onClose: () => void;
}) {
  const deliveries = useQuery(deliveriesQueryOptions(channel.id));
  const label = `History of ${channel.name}`;
  const newestFirst = [...(deliveries.data ?? [])].sort((a, b) => b.id - a.id);
  const sizes = messageSizes(newestFirst);
  return (
    <Dialog title={label} onClose={onClose} className="wide-dialog">
      {deliveries.isError ? (
        <ErrorBanner error={deliveries.error} onRetry={() => void deliveries.refetch()} />
      ) : !deliveries.data ? (
        <Loading />
      ) : newestFirst.length === 0 ? (
        <p className="muted">Nothing was sent to it yet (tests are not kept here).</p>
      ) : (
        <>
          <Table label={label} columns={COLUMNS}>
            {newestFirst.map((delivery) => (
              <DeliveryRow
                key={delivery.id}
                delivery={delivery}
                catalogue={catalogue}
                digest={delivery.message ? (sizes.get(delivery.message) ?? 1) : 1}
              />
            ))}
          </Table>
          {newestFirst.length >= HISTORY_LIMIT && <p className="muted small">The newest {HISTORY_LIMIT} deliveries.</p>}
        </>
      )}
      <div className="actions dialog-actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
