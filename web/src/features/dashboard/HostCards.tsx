import { useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { Link } from "react-router";
import type { Agent, HostCard, HostReport, HostStatus } from "../../api/types";
import { formatAgo, formatBytes, formatDateTime } from "../../components/format";
import { ProgressBar } from "../../components/ProgressBar";
import type { Tone } from "../../components/tone";
import { agentsQueryOptions } from "../agents/queries";
import { withHost } from "../hosts/host";

const STATUS_LABELS: Record<HostStatus, string> = {
  online: "Online",
  reconnecting: "Reconnecting",
  offline: "Offline",
  incompatible: "Incompatible",
  disabled: "Disabled",
};

/** Reconnecting is of note, not an error: an agent that dials in whose tunnel just went down dials again on its own. */
const STATUS_TONES: Record<HostStatus, Tone> = {
  online: "good",
  reconnecting: "info",
  offline: "bad",
  incompatible: "warn",
  disabled: "off",
};

/** The card's badge: this host, or an agent of either kind (just "Agent" while the list of agents is not read). */
function kindLabel(card: HostCard, agent: Agent | undefined): string {
  if (card.kind === "local") return "This host";
  if (!agent) return "Agent";
  return agent.kind === "tunnel" ? "Agent · connects to us" : "Agent · direct";
}

/** Percent used from a total and what is left. */
function usedPercent(total: number, left: number): number {
  return total > 0 ? (100 * (total - left)) / total : 0;
}

function UsageBar({
  label,
  total,
  left,
  levels,
  detail,
}: {
  label: string;
  total: number;
  left: number;
  /** Percent at which it is a warning, then critical (the server's levels). */
  levels: [number, number];
  detail?: string;
}) {
  const id = useId();
  const used = usedPercent(total, left);
  const text = `${formatBytes(total - left)} of ${formatBytes(total)} used (${Math.round(used)} %)`;
  const tone = used >= levels[1] ? "bad" : used >= levels[0] ? "warn" : undefined;
  return (
    <div className="usage">
      <div className="usage-head">
        <span id={id}>{label}</span>
        <span className="muted small">{text}</span>
      </div>
      <ProgressBar labelledBy={id} percent={used} tone={tone} valueText={text} />
      {detail && <div className="muted small usage-detail">{detail}</div>}
    </div>
  );
}

/**
 * What Docker keeps on the host (measured in the background, never while the dashboard
 * waits): images, volumes and what a prune may free, a link to its Disk page. A host that
 * measures it but has not yet says so; an older agent, which never does, says nothing.
 */
function DiskFacts({ card, report }: { card: HostCard; report: HostReport }) {
  const disk = report.disk;
  if (!disk && !report.capabilities?.includes("disk")) return null;
  return (
    <>
      <dt>Docker disk</dt>
      <dd data-testid="host-disk">
        {disk ? (
          <>
            images {formatBytes(disk.images)} · volumes {formatBytes(disk.volumes)} ·{" "}
            <Link to={withHost("/disk", card.id)}>{formatBytes(disk.reclaimable)} reclaimable</Link>
          </>
        ) : (
          <span className="muted">not measured yet</span>
        )}
      </dd>
    </>
  );
}

function Resources({ card, report }: { card: HostCard; report: HostReport }) {
  const r = report.resources;
  const stacksHref = withHost("/stacks", card.id);
  return (
    <>
      <dl className="facts host-facts">
        <dt>CPU</dt>
        <dd>
          {r.cpus} {r.cpus === 1 ? "CPU" : "CPUs"} · load {r.load.map((l) => l.toFixed(2)).join(" / ")}
        </dd>
        <dt>Containers</dt>
        <dd>
          {r.containers_running} of {r.containers_total} running
        </dd>
        <dt>Stacks</dt>
        <dd>
          <Link to={stacksHref}>
            {r.stacks} {r.stacks === 1 ? "stack" : "stacks"}
          </Link>
          {report.partial.length > 0 && <span className="muted"> · {report.partial.length} partly running</span>}
          {report.updates.length > 0 && <span className="muted"> · {report.updates.length} with updates</span>}
        </dd>
        <DiskFacts card={card} report={report} />
      </dl>
      {r.memory_total > 0 ? (
        <UsageBar label="Memory" total={r.memory_total} left={r.memory_available} levels={[90, 95]} />
      ) : (
        <p className="muted small">Memory not measured.</p>
      )}
      {r.disk_total ? (
        <UsageBar
          label="Disk"
          total={r.disk_total}
          left={r.disk_free ?? 0}
          levels={[85, 95]}
          detail={r.disk_path ? `Docker data at ${r.disk_path}` : undefined}
        />
      ) : (
        <p className="muted small">Disk not measured (the engine's data folder is not visible to Stackyard).</p>
      )}
      {report.engine_error && (
        <p className="error small" role="alert">
          {report.engine_error}
        </p>
      )}
    </>
  );
}

/**
 * Why a host did not answer. A reconnecting agent's tunnel has been down since when (from
 * its record: the card says it only in words), which is not an error.
 */
function DownDetail({ card, agent }: { card: HostCard; agent: Agent | undefined }) {
  if (card.status === "reconnecting") {
    const since = agent?.tunnel === "reconnecting" ? agent.tunnel_since : null;
    if (!since) return card.detail ? <p className="muted">{card.detail}</p> : null;
    return (
      <p className="muted" data-testid="host-reconnecting">
        Its tunnel went down at{" "}
        <time dateTime={since} title={formatAgo(since)}>
          {formatDateTime(since)}
        </time>
        ; it connects again on its own.
      </p>
    );
  }
  if (!card.detail) return null;
  return <p className={card.status === "offline" ? "error" : "warn-text"}>{card.detail}</p>;
}

/** How fresh an online host's report is: its answer time when asked, its age when pushed. */
function Freshness({ card }: { card: HostCard }) {
  if (card.status !== "online") return null;
  if (card.answered_in_ms !== null) return <> · answered in {Math.round(card.answered_in_ms)} ms</>;
  if (!card.reported_at) return null;
  return (
    <>
      {" · reported "}
      <time dateTime={card.reported_at} title={formatDateTime(card.reported_at)} data-testid="host-reported">
        {formatAgo(card.reported_at)}
      </time>
    </>
  );
}

/**
 * One host: its status and version; its resources when it answered, else why not and when
 * it was last seen. `agent` is the agent's record, for its kind and its tunnel's state.
 */
export function HostCardView({ card, agent }: { card: HostCard; agent?: Agent }) {
  const titleId = useId();
  return (
    <section className={`card host-card tone-${STATUS_TONES[card.status]}`} aria-labelledby={titleId}>
      <div className="host-card-head">
        <h3 id={titleId}>{card.name}</h3>
        <span className="badge" data-testid="host-kind">
          {kindLabel(card, agent)}
        </span>
        <span className="host-status" data-testid="host-status">
          {STATUS_LABELS[card.status]}
        </span>
      </div>
      <p className="muted small host-meta">
        {card.version ? `Stackyard ${card.version}` : "Version not known"}
        <Freshness card={card} />
      </p>
      {card.report ? (
        <Resources card={card} report={card.report} />
      ) : (
        <div className="host-down">
          <DownDetail card={card} agent={agent} />
          <p className="muted small">
            Last seen{" "}
            {card.last_seen_at ? (
              <time dateTime={card.last_seen_at} title={formatDateTime(card.last_seen_at)}>
                {formatAgo(card.last_seen_at)}
              </time>
            ) : (
              "never"
            )}
            {card.kind === "agent" && (
              <>
                {" · "}
                <Link to="/agents">Agents</Link>
              </>
            )}
          </p>
        </div>
      )}
    </section>
  );
}

/**
 * A card per host: this host first, then the agents (as the server orders them). The list
 * of agents (every user may read it) says each agent's kind and since when a tunnel is down.
 */
export function HostCards({ hosts }: { hosts: readonly HostCard[] }) {
  const agents = useQuery({ ...agentsQueryOptions(), enabled: hosts.some((card) => card.kind === "agent") });
  const byId = new Map((agents.data ?? []).map((agent) => [agent.id, agent]));
  return (
    <section aria-labelledby="hosts-title" className="hosts-section">
      <h2 id="hosts-title">Hosts</h2>
      <div className="host-grid">
        {hosts.map((card) => (
          <HostCardView key={card.id ?? "local"} card={card} agent={card.id === null ? undefined : byId.get(card.id)} />
        ))}
      </div>
    </section>
  );
}
