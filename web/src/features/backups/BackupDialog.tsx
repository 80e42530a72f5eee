import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { BackupAsset, Inventory } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { formatBytes } from "../../components/format";
import { Loading } from "../../components/Loading";
import { Table } from "../../components/Table";
import { inventoryQueryOptions, useCreateBackup } from "./queries";
import { useHost } from "../hosts/host";
import { FormActions } from "../../components/FormActions";

const COLUMNS = ["Back up", "Volume or folder", "Used by", "Size", "Note"] as const;

function label(asset: BackupAsset): string {
  if (asset.kind === "volume") return asset.compose_key ? `${asset.compose_key} (volume ${asset.name})` : asset.name;
  return asset.inside_stack ? `./${asset.inside_stack}` : asset.name;
}

function notes(asset: BackupAsset): string[] {
  const found: string[] = [];
  if (asset.remote) found.push(asset.remote.toUpperCase());
  if (asset.external) found.push("external");
  if (asset.kind === "bind" && !asset.inside_stack) found.push("outside the stack folder");
  if (asset.reason) found.push(asset.reason);
  return found;
}

/** The stack's volumes and binds with sizes, each chosen or not (the inventory's choice
 * first, with why not), and the path mismatch explained when there is one. */
function AssetChoice({
  inventory,
  chosen,
  onToggle,
}: {
  inventory: Inventory;
  chosen: Set<string>;
  onToggle: (key: string, on: boolean) => void;
}) {
  if (inventory.assets.length === 0) {
    return <p className="muted">The stack uses no volume or bind folder: its folder is backed up alone.</p>;
  }
  return (
    <Table label="Volumes and folders" columns={COLUMNS}>
      {inventory.assets.map((asset) => (
        <tr key={asset.key} className={asset.selected ? undefined : "muted"}>
          <td>
            <input
              type="checkbox"
              aria-label={`Back up ${label(asset)}`}
              checked={chosen.has(asset.key)}
              disabled={!asset.exists}
              onChange={(event) => onToggle(asset.key, event.target.checked)}
            />
          </td>
          <th scope="row">
            <code>{label(asset)}</code>
            <div className="muted small">{asset.kind === "volume" ? "named volume" : "bind folder"}</div>
          </th>
          <td className="small">{asset.uses.map((use) => `${use.service}:${use.target}`).join(", ")}</td>
          <td className="nowrap">{asset.size === null ? "—" : formatBytes(asset.size)}</td>
          <td className="small">{notes(asset).join(" · ")}</td>
        </tr>
      ))}
    </Table>
  );
}

export function BackupDialog({ stackId, onClose }: { stackId: string; onClose: () => void }) {
  const host = useHost();
  const inventory = useQuery(inventoryQueryOptions(host, stackId));
  const create = useCreateBackup(stackId);
  const [chosen, setChosen] = useState<Set<string> | null>(null);
  const selection =
    chosen ?? new Set((inventory.data?.assets ?? []).filter((a) => a.selected).map((a) => a.key));

  function toggle(key: string, on: boolean) {
    const next = new Set(selection);
    if (on) next.add(key);
    else next.delete(key);
    setChosen(next);
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const assets = inventory.data?.assets ?? [];
    const names = (kind: BackupAsset["kind"]) => assets.filter((a) => a.kind === kind && selection.has(a.key)).map((a) => a.name);
    create.mutate({ include_binds: true, volumes: names("volume"), binds: names("bind") }, { onSuccess: onClose });
  }

  return (
    <Dialog title={`Back up ${stackId}`} onClose={onClose} className="wide-dialog">
      {inventory.isError ? (
        <ErrorText error={inventory.error} />
      ) : !inventory.data ? (
        <Loading label="Measuring the stack's volumes and folders…" />
      ) : (
        <form onSubmit={submit} aria-label={`Back up ${stackId}`}>
          <p>
            The stack folder (compose files, <code>.env</code>, <code>.secrets</code> and everything else in it)
            and the volumes and folders chosen here. A running stack is stopped for the copy and started again.
          </p>
          {inventory.data.paths.mismatch && (
            <p className="notice" role="note">
              {inventory.data.paths.explanation}
            </p>
          )}
          <AssetChoice inventory={inventory.data} chosen={selection} onToggle={toggle} />
          <p className="muted small" data-testid="backup-total">
            {selection.size} of {inventory.data.assets.length} chosen · about{" "}
            {formatBytes(
              inventory.data.folder_size +
                inventory.data.assets.filter((a) => selection.has(a.key)).reduce((sum, a) => sum + (a.size ?? 0), 0),
            )}{" "}
            of data to read, the stack folder ({formatBytes(inventory.data.folder_size)}) with it. The archive is
            compressed: smaller, as a rule.
          </p>
          {create.isError && <ErrorText error={create.error} />}
          <FormActions label="Start backup" busyLabel="Starting…" busy={create.isPending} onCancel={onClose} />
        </form>
      )}
    </Dialog>
  );
}
