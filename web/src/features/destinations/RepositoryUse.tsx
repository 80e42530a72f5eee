import { useQuery } from "@tanstack/react-query";
import type { Destination, RepositoryUse as Use } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatBytes } from "../../components/format";
import { Loading } from "../../components/Loading";
import { Table } from "../../components/Table";
import { repositoryUseQueryOptions } from "./queries";

const COLUMNS = ["Stack", "Backups"] as const;

/** What deduplication and compression save, in percent of what the backups take as archives; null when there are none. */
export function saving(use: Use): number | null {
  if (use.archives_bytes <= 0) return null;
  return Math.round(100 * (1 - use.stored_bytes / use.archives_bytes));
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function Figures({ use, name }: { use: Use; name: string }) {
  const saved = saving(use);
  const stacks = Object.entries(use.stacks).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <dl className="facts">
        <dt>Stored on {name}</dt>
        <dd>{formatBytes(use.stored_bytes)}</dd>
        <dt>The backups as archives</dt>
        <dd>{formatBytes(use.archives_bytes)}</dd>
        <dt>Saving</dt>
        <dd>{saved === null ? "—" : `${saved}%`}</dd>
        <dt>Backups</dt>
        <dd>{use.backups}</dd>
        <dt>Instances</dt>
        <dd>{plural(use.instances, "instance of Stackyard keeps", "instances of Stackyard keep")} backups here</dd>
        {use.partial > 0 && (
          <>
            <dt>Partial backups</dt>
            <dd className="warn-text">
              {plural(use.partial, "push", "pushes")} killed mid-way: {use.partial === 1 ? "its parts are" : "their parts are"}{" "}
              removed by the next push
            </dd>
          </>
        )}
      </dl>
      {stacks.length > 0 && (
        <Table label={`Backups per stack on ${name}`} columns={COLUMNS}>
          {stacks.map(([stack, count]) => (
            <tr key={stack}>
              <th scope="row">{stack}</th>
              <td>{count}</td>
            </tr>
          ))}
        </Table>
      )}
    </>
  );
}

/**
 * A repository destination's use: what it takes on its storage against what its backups
 * would take as archives (the saving of deduplication and compression), its backups per
 * stack, the instances that keep backups there, and pushes that never ended.
 */
export function RepositoryUse({ destination, onClose }: { destination: Destination; onClose: () => void }) {
  const use = useQuery(repositoryUseQueryOptions(destination.id));
  const label = `Use of ${destination.name}`;
  return (
    <section className="card" aria-label={label}>
      <div className="console-head">
        <h2>{label}</h2>
        <div className="actions">
          <button type="button" onClick={() => void use.refetch()} disabled={use.isFetching}>
            {use.isFetching ? "Reading…" : "Refresh"}
          </button>
          <button type="button" className="link-button" aria-label={`Close ${label}`} onClick={onClose}>
            Close
          </button>
        </div>
      </div>
      {use.isError ? (
        <ErrorBanner error={use.error} onRetry={() => void use.refetch()} />
      ) : !use.data ? (
        <Loading label={`Reading the repository ${destination.name}…`} />
      ) : (
        <Figures use={use.data} name={destination.name} />
      )}
    </section>
  );
}
