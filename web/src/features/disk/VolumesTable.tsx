import { useRef, useState, type FormEvent } from "react";
import { Link } from "react-router";
import type { DiskVolume } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { formatBytes, formatDateTime } from "../../components/format";
import { FormActions } from "../../components/FormActions";
import { Cell, Row, RowActions, Table } from "../../components/Table";
import { useCan } from "../auth/permissions";
import { useHost, withHost } from "../hosts/host";
import { isStackId } from "./filters";
import { useRemoveVolume } from "./queries";
import { Protected, UsedBy } from "./UsedBy";

const COLUMNS = ["Volume", "Stack", "Size", "Created", "Used by"] as const;
const FOLD = ["Created", "Stack", "Size"] as const;

/** An anonymous volume's name is 64 hex digits: its first 12, as `docker volume ls` users know them. */
function volumeLabel(volume: DiskVolume): string {
  return volume.anonymous && /^[0-9a-f]{64}$/.test(volume.name) ? volume.name.slice(0, 12) : volume.name;
}

export function StackLink({ stack }: { stack: string | null | undefined }) {
  const host = useHost();
  if (!stack) return <span className="muted">—</span>;
  if (!isStackId(stack)) return <>{stack}</>;
  return <Link to={withHost(`/stacks/${encodeURIComponent(stack)}`, host)}>{stack}</Link>;
}

/** Admin: a volume's removal, with its data, confirmed by typing its name (as a stack's deletion is). */
function RemoveVolumeDialog({ volume, onClose }: { volume: DiskVolume; onClose: () => void }) {
  const host = useHost();
  const remove = useRemoveVolume(host);
  const [typed, setTyped] = useState("");
  const nameRef = useRef<HTMLInputElement>(null);
  const matches = typed === volume.name;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!matches || remove.isPending) return;
    remove.mutate({ name: volume.name, confirm: typed }, { onSuccess: onClose });
  }

  const title = `Remove volume ${volumeLabel(volume)}?`;
  return (
    <Dialog title={title} onClose={onClose} initialFocus={nameRef} className="dialog-wide">
      <form onSubmit={onSubmit} aria-label={`Remove volume ${volume.name}`}>
        <div className="dialog-body">
          <p>
            <strong>The volume and every file in it are removed for good</strong>
            {volume.size >= 0 && ` (${formatBytes(volume.size)})`}. Only a backup that holds it can bring them back.
          </p>
          {volume.stack && (
            <p data-testid="volume-stack">
              It belongs to the stack <StackLink stack={volume.stack} />: started again, the stack gets an empty volume.
            </p>
          )}
          {volume.used_by.length > 0 && (
            <p className="warn-text">A container uses it: the engine refuses while it does (stop the stack first).</p>
          )}
          <Field label={`Type the volume's name, ${volume.name}, to confirm`}>
            <input
              ref={nameRef}
              value={typed}
              autoComplete="off"
              spellCheck={false}
              onChange={(e) => setTyped(e.target.value)}
            />
          </Field>
        </div>
        {remove.isError && <ErrorText error={remove.error} />}
        <FormActions
          label="Remove the volume"
          busyLabel="Removing…"
          busy={remove.isPending}
          disabled={!matches}
          danger
          inDialog
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}

/** The host's volumes: the stack each belongs to, size on disk, what uses it; admins remove one. */
export function VolumesTable({ volumes }: { volumes: readonly DiskVolume[] }) {
  const mayManage = useCan("disk.manage");
  const [removing, setRemoving] = useState<DiskVolume | null>(null);
  return (
    <>
      <Table label="Volumes" columns={COLUMNS} fold={FOLD} actions={mayManage}>
        {volumes.map((volume) => (
          <Row key={volume.name}>
            <th scope="row">
              <code className="disk-name" title={volume.name}>
                {volumeLabel(volume)}
              </code>
              <div className="disk-badges">
                {volume.anonymous && <span className="badge">anonymous</span>}
                {volume.driver !== "local" && <span className="badge">{volume.driver}</span>}
                <Protected reason={volume.protected} />
              </div>
            </th>
            <Cell column="Stack">
              <StackLink stack={volume.stack} />
            </Cell>
            <Cell column="Size" className="nowrap">
              {volume.size < 0 ? <span className="muted">not measured</span> : formatBytes(volume.size)}
            </Cell>
            <Cell column="Created" className="nowrap">
              {formatDateTime(volume.created, { seconds: false })}
            </Cell>
            <Cell column="Used by">
              <UsedBy users={volume.used_by} />
            </Cell>
            {mayManage && (
              <RowActions>
                <button
                  type="button"
                  className="danger"
                  aria-label={`Remove volume ${volume.name}`}
                  onClick={() => setRemoving(volume)}
                >
                  Remove…
                </button>
              </RowActions>
            )}
          </Row>
        ))}
      </Table>
      {removing && <RemoveVolumeDialog volume={removing} onClose={() => setRemoving(null)} />}
    </>
  );
}
