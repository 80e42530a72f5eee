import { Link } from "react-router";
import type { Attention, Fleet, Kpis } from "../../api/types";
import type { Tone } from "../../components/tone";
import { STATE_LABEL, STATE_ORDER, STATE_TONES } from "../stacks/state";
import { attentionHref, byPriority, SEVERITY_LABELS, SEVERITY_TONES } from "./attention";

/** What needs someone, most pressing first; each item names its host and stack (a link to it). */
export function AttentionList({ items }: { items: readonly Attention[] }) {
  const ordered = byPriority(items);
  return (
    <section className="card attention-card" aria-labelledby="attention-title">
      <h2 id="attention-title">
        Needs attention {ordered.length > 0 && <span className="count">{ordered.length}</span>}
      </h2>
      {ordered.length === 0 ? (
        <p className="success">Nothing needs attention: every host answered and every stack is as it should be.</p>
      ) : (
        <ul className="attention-list" aria-label="Needs attention">
          {ordered.map((item, i) => (
            <AttentionItem key={`${item.host_id ?? "local"}-${item.kind}-${item.stack ?? ""}-${i}`} item={item} />
          ))}
        </ul>
      )}
    </section>
  );
}

function AttentionItem({ item }: { item: Attention }) {
  const href = attentionHref(item);
  return (
    <li className={`attention tone-${SEVERITY_TONES[item.severity]}`} data-severity={item.severity}>
      <span className="severity">{SEVERITY_LABELS[item.severity]}</span>
      <span className="attention-where">
        <span className="attention-host">{item.host}</span>
        {item.stack && (
          <>
            {" / "}
            {href ? (
              <Link to={href} className="attention-stack">
                {item.stack}
              </Link>
            ) : (
              <span className="attention-stack">{item.stack}</span>
            )}
          </>
        )}
      </span>
      <span className="attention-message">
        {item.message}
        {!item.stack && href && (
          <>
            {" "}
            <Link to={href}>See the agent</Link>
          </>
        )}
      </span>
    </li>
  );
}

function Figure({ label, value, of, tone }: { label: string; value: number; of?: number; tone?: Tone }) {
  return (
    <div className="kpi">
      <dt>{label}</dt>
      <dd>
        <span className={tone ? `kpi-value status tone-${tone}` : "kpi-value"}>{value}</span>
        {of !== undefined && <span className="kpi-of"> of {of}</span>}
      </dd>
    </div>
  );
}

/** The headline figures over every host that answered. */
export function Headline({ kpis }: { kpis: Kpis }) {
  return (
    <section aria-label="Headline figures">
      <dl className="kpis">
        <Figure
          label="Hosts online"
          value={kpis.hosts_online}
          of={kpis.hosts}
          tone={kpis.hosts_online < kpis.hosts ? "bad" : "good"}
        />
        <Figure label="Stacks running" value={kpis.stacks_running} of={kpis.stacks} />
        <Figure label="Containers running" value={kpis.containers_running} of={kpis.containers_total} />
        <Figure label="Updates available" value={kpis.updates} />
        <Figure label="Critical" value={kpis.critical} tone={kpis.critical ? "bad" : undefined} />
        <Figure label="Warnings" value={kpis.warnings} tone={kpis.warnings ? "warn" : undefined} />
      </dl>
    </section>
  );
}

/** Each state by its word, the same as the stacks list's (older agents count fewer states). */
const STATES = STATE_ORDER.map((key) => ({ key, label: STATE_LABEL[key] }));

/** Stacks by state over the hosts that answered: a bar and its legend. */
export function StackBreakdown({ breakdown }: { breakdown: Fleet["breakdown"] }) {
  const total = STATES.reduce((sum, { key }) => sum + (breakdown[key] ?? 0), 0);
  return (
    <section className="card" aria-labelledby="breakdown-title">
      <h2 id="breakdown-title">Stacks by state</h2>
      {total === 0 ? (
        <p className="muted">No stacks on the hosts that answered.</p>
      ) : (
        <div className="breakdown-bar" aria-hidden="true">
          {STATES.map(({ key }) => {
            const count = breakdown[key] ?? 0;
            return count > 0 ? (
              <span key={key} className={`breakdown-part tone-${STATE_TONES[key]}`} style={{ width: `${(100 * count) / total}%` }} />
            ) : null;
          })}
        </div>
      )}
      <ul className="plain breakdown-legend" aria-label="Stacks by state">
        {/* Running and stopped always; the other states when a stack is in them. */}
        {STATES.filter(({ key }) => key === "running" || key === "stopped" || (breakdown[key] ?? 0) > 0).map(({ key, label }) => (
          <li key={key}>
            <span className={`legend-swatch tone-${STATE_TONES[key]}`} aria-hidden="true" />
            {label}: <strong>{breakdown[key] ?? 0}</strong>
          </li>
        ))}
      </ul>
    </section>
  );
}
