import { useState } from "react";
import { Link } from "react-router";
import type { BuildCacheEntry, DiskContainer, DiskNetwork } from "../../api/types";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { formatBytes, formatDateTime, shortDigest } from "../../components/format";
import { Cell, Row, RowActions, Table } from "../../components/Table";
import { useCan } from "../auth/permissions";
import { useHost, withHost } from "../hosts/host";
import { useRemoveNetwork } from "./queries";
import { Protected, UsedBy } from "./UsedBy";
import { StackLink } from "./VolumesTable";

const NETWORK_COLUMNS = ["Network", "Stack", "Driver", "Created", "Used by"] as const;
const NETWORK_FOLD = ["Created", "Driver", "Stack"] as const;

/** The engine's own networks (Docker's fixed names and drivers): they cannot be removed. */
const BUILTIN: Record<string, string> = { bridge: "bridge", host: "host", none: "null" };

function builtin(network: DiskNetwork): boolean {
  return BUILTIN[network.name] === network.driver;
}

/** The host's networks: the stack each belongs to, what is attached; admins remove one. */
export function NetworksTable({ networks }: { networks: readonly DiskNetwork[] }) {
  const host = useHost();
  const mayManage = useCan("disk.manage");
  const remove = useRemoveNetwork(host);
  const [removing, setRemoving] = useState<DiskNetwork | null>(null);
  return (
    <>
      <Table label="Networks" columns={NETWORK_COLUMNS} fold={NETWORK_FOLD} actions={mayManage}>
        {networks.map((network) => (
          <Row key={network.id}>
            <th scope="row">
              <span className="disk-name">{network.name}</span>
              <div className="disk-badges">
                <code className="muted small" title={network.id}>
                  {shortDigest(network.id)}
                </code>
                <Protected reason={network.protected} />
              </div>
            </th>
            <Cell column="Stack">
              <StackLink stack={network.stack} />
            </Cell>
            <Cell column="Driver">{network.driver}</Cell>
            <Cell column="Created" className="nowrap">
              {formatDateTime(network.created, { seconds: false })}
            </Cell>
            <Cell column="Used by">
              <UsedBy users={network.used_by} />
            </Cell>
            {mayManage && (
              <RowActions>
                {!builtin(network) && (
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Remove network ${network.name}`}
                    onClick={() => setRemoving(network)}
                  >
                    Remove
                  </button>
                )}
              </RowActions>
            )}
          </Row>
        ))}
      </Table>
      {removing && (
        <ConfirmDelete
          title={`Remove network ${removing.name}?`}
          confirmLabel="Remove the network"
          remove={remove}
          variables={removing.id}
          onCancel={() => setRemoving(null)}
          onDeleted={() => setRemoving(null)}
        >
          <p>
            The network is removed. The engine refuses while a container is attached to it
            {removing.stack ? `; the stack ${removing.stack} makes it again when it next starts` : ""}.
          </p>
        </ConfirmDelete>
      )}
    </>
  );
}

const CONTAINER_COLUMNS = ["Container", "Image", "State", "Size"] as const;

/** Containers of no stack with what each takes (its writable layer); they are acted on on the Containers page. */
export function ContainersTable({ containers }: { containers: readonly DiskContainer[] }) {
  const host = useHost();
  return (
    <>
      <p className="muted small">
        Started by <code>docker run</code> or another tool: their logs, start and stop are on the{" "}
        <Link to={withHost("/containers", host)}>Containers</Link> page. A prune takes the stopped ones.
      </p>
      <Table label="Containers of no stack" columns={CONTAINER_COLUMNS}>
        {containers.map((container) => (
          <tr key={container.id}>
            <th scope="row">
              <span className="disk-name">{container.name}</span>
              <div className="disk-badges">
                <Protected reason={container.protected} />
              </div>
            </th>
            <td>
              <code className="disk-name">{container.image}</code>
            </td>
            <td>{container.state}</td>
            <td className="nowrap">{formatBytes(container.size)}</td>
          </tr>
        ))}
      </Table>
    </>
  );
}

const CACHE_COLUMNS = ["Entry", "Kind", "Size", "In use", "Last used"] as const;
const CACHE_FOLD = ["Last used", "Kind"] as const;

/** The builder's cache: what each entry is, its size, whether a build holds it now. */
export function BuildCacheTable({ entries }: { entries: readonly BuildCacheEntry[] }) {
  return (
    <Table label="Build cache" columns={CACHE_COLUMNS} fold={CACHE_FOLD}>
      {entries.map((entry) => (
        <Row key={entry.id}>
          <th scope="row">
            <span className="disk-name small">{entry.description || shortDigest(entry.id)}</span>
          </th>
          <Cell column="Kind">{entry.kind}</Cell>
          <Cell column="Size" className="nowrap">
            {formatBytes(entry.size)}
            {entry.shared && <div className="muted small">shared</div>}
          </Cell>
          <Cell column="In use">{entry.in_use ? "yes" : "no"}</Cell>
          <Cell column="Last used" className="nowrap">
            {formatDateTime(entry.last_used, { seconds: false })}
          </Cell>
        </Row>
      ))}
    </Table>
  );
}
