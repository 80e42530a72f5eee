import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ApiError } from "../../api/errors";
import type { ArchiveInfo, Run } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { manifestQueryOptions, useRestoreBackup } from "./queries";
import { useHost } from "../hosts/host";
import { FormActions } from "../../components/FormActions";

/**
 * Restore an archive: into its own stack (over it only when the user confirms, after the
 * server's 409) or under a new name (a clone beside the original), with or without the
 * bind folders, all of it or chosen volumes and folders.
 */
export function RestoreDialog({
  archive,
  onClose,
  onStarted,
}: {
  archive: ArchiveInfo;
  onClose: () => void;
  onStarted: (run: Run) => void;
}) {
  const host = useHost();
  const manifest = useQuery(manifestQueryOptions(host, archive.name));
  const restore = useRestoreBackup();
  const [newName, setNewName] = useState("");
  const [restoreBinds, setRestoreBinds] = useState(true);
  const [overwrite, setOverwrite] = useState(false);
  const [chosen, setChosen] = useState<Set<string> | null>(null);
  const captured = (manifest.data?.assets ?? []).filter((a) => a.captured);
  const selection = chosen ?? new Set(captured.map((a) => a.key));
  const conflict = restore.error instanceof ApiError && restore.error.status === 409;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const all = selection.size === captured.length;
    restore.mutate(
      {
        name: archive.name,
        options: {
          stack: newName.trim() || null,
          overwrite,
          restore_binds: restoreBinds,
          assets: all ? null : [...selection],
        },
      },
      { onSuccess: (run) => onStarted(run) },
    );
  }

  return (
    <Dialog title={`Restore ${archive.name}`} onClose={onClose} className="wide-dialog">
      <form onSubmit={submit} aria-label={`Restore ${archive.name}`}>
        <p>
          Stack <code>{archive.stack_id}</code> from {archive.host}, made {archive.created_at ?? "?"}. The stack's
          files and the chosen data are written back; a running stack is stopped meanwhile and started again.
        </p>
        <Field label="Restore as (empty: as itself)">
          <input
            value={newName}
            placeholder={archive.stack_id ?? ""}
            onChange={(event) => {
              setNewName(event.target.value);
              setOverwrite(false);
              restore.reset();
            }}
          />
        </Field>
        <label className="check">
          <input type="checkbox" checked={restoreBinds} onChange={(e) => setRestoreBinds(e.target.checked)} />
          <span>Write bind folders back to their paths</span>
        </label>
        {captured.length > 0 && (
          <fieldset>
            <legend>Volumes and folders</legend>
            {captured.map((asset) => (
              <label key={asset.key} className="check">
                <input
                  type="checkbox"
                  checked={selection.has(asset.key)}
                  onChange={(event) => {
                    const next = new Set(selection);
                    if (event.target.checked) next.add(asset.key);
                    else next.delete(asset.key);
                    setChosen(next);
                  }}
                />
                <span>
                  <code>{asset.key.replace(/^(volume|bind):/, "")}</code>{" "}
                  <span className="muted small">{asset.key.startsWith("volume:") ? "volume" : "folder"}</span>
                </span>
              </label>
            ))}
          </fieldset>
        )}
        {conflict ? (
          <div className="notice" role="alert">
            <p>{restore.error?.message}</p>
            <label className="check">
              <input type="checkbox" checked={overwrite} onChange={(e) => setOverwrite(e.target.checked)} />
              <span>
                Replace stack <code>{newName.trim() || archive.stack_id}</code>: its volumes and bind folders get the
                archive's contents (files made since are gone), and the archive's files replace those of its stack folder
              </span>
            </label>
          </div>
        ) : (
          restore.isError && <ErrorText error={restore.error} />
        )}
        <FormActions
          label={overwrite ? "Restore over it" : "Restore"}
          busy={restore.isPending}
          disabled={conflict && !overwrite}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}
