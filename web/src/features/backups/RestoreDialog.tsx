import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ApiError } from "../../api/errors";
import type { ArchiveInfo, Fidelity, RestoreOptions, RestorePreview, Run } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { formatDateTime } from "../../components/format";
import { manifestQueryOptions, restorePreviewQueryOptions, useRestoreBackup } from "./queries";
import { useHost } from "../hosts/host";
import { useDebounced } from "../../hooks/useDebounced";
import { FormActions } from "../../components/FormActions";

/**
 * Restore an archive: into its own stack (over it only when the user confirms, after the
 * server's 409) or under a new name (a clone beside the original, whose bind folders
 * outside the stack folder go where the user says), with or without the bind folders,
 * all of it or chosen volumes and folders. The server's preview shows every path outside
 * the stack folder that will be written, made or replaced; the restore confirms them.
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
  const [specialFiles, setSpecialFiles] = useState(false);
  const [bindPaths, setBindPaths] = useState<Record<string, string>>({});
  const captured = (manifest.data?.assets ?? []).filter((a) => a.captured);
  const selection = chosen ?? new Set(captured.map((a) => a.key));
  const conflict = restore.error instanceof ApiError && restore.error.status === 409;
  const clone = newName.trim() || null;
  const options: RestoreOptions = {
    stack: clone,
    overwrite,
    restore_binds: restoreBinds,
    assets: selection.size === captured.length ? null : [...selection],
    special_files: specialFiles,
    bind_paths: clone && Object.keys(bindPaths).length > 0 ? bindPaths : null,
  };
  // Asked once typing has settled, not on every key of a new name or a moved path.
  const asked = JSON.stringify(options);
  const settledKey = useDebounced(asked, 300);
  const settled = JSON.parse(settledKey) as RestoreOptions;
  const preview = useQuery({
    ...restorePreviewQueryOptions(host, archive.name, settled),
    enabled: manifest.isSuccess,
    placeholderData: keepPreviousData,
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const confirm_paths = (preview.data?.outside ?? []).map((write) => write.path);
    restore.mutate({ name: archive.name, options: { ...options, confirm_paths } }, { onSuccess: (run) => onStarted(run) });
  }

  return (
    <Dialog title={`Restore ${archive.name}`} onClose={onClose} className="wide-dialog">
      <form onSubmit={submit} aria-label={`Restore ${archive.name}`}>
        <p>
          Stack <code>{archive.stack_id}</code> from {archive.host}, made {formatDateTime(archive.created_at)}. The stack's
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
        {manifest.data?.stack_fidelity && manifest.data.stack_fidelity.tool !== "gnu-tar" && (
          <p className="small">
            Stack folder: <NotKept fidelity={manifest.data.stack_fidelity} />
          </p>
        )}
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
                  <NotKept fidelity={asset.fidelity} />
                </span>
              </label>
            ))}
          </fieldset>
        )}
        <label className="check">
          <input type="checkbox" checked={specialFiles} onChange={(e) => setSpecialFiles(e.target.checked)} />
          <span>
            Write device nodes, setuid/setgid files and files with capabilities into the stack folder and bind folders
            too{" "}
            <span className="muted small">(volumes always keep them; Verify lists them)</span>
          </span>
        </label>
        <RestorePlan
          stale={asked !== settledKey || preview.isPlaceholderData}
          preview={preview.data}
          error={preview.error}
          clone={clone}
          onMove={(original, path) => setBindPaths((paths) => ({ ...paths, [original]: path }))}
        />
        {conflict ? (
          <div className="notice tone-warn" role="alert">
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
          danger={overwrite}
          busy={restore.isPending}
          disabled={(conflict && !overwrite) || !preview.isSuccess || preview.isPlaceholderData || asked !== settledKey}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}

/** Where the restore writes outside the stack folder (each path made or replaced; a
 * clone's paths can be changed), and what it leaves out and why. */
function RestorePlan({
  stale,
  preview,
  error,
  clone,
  onMove,
}: {
  stale: boolean;
  preview: RestorePreview | undefined;
  error: Error | null;
  clone: string | null;
  onMove: (original: string, path: string) => void;
}) {
  if (error) return <ErrorText error={error} />;
  if (!preview) return <p className="muted">Working out what the restore writes…</p>;
  const skipped = Object.entries(preview.skipped);
  return (
    <section aria-label="What the restore writes" aria-busy={stale} className={stale ? "stale" : undefined}>
      {preview.outside.length > 0 ? (
        <fieldset>
          <legend>Written outside the stack folder</legend>
          <ul className="plain">
            {preview.outside.map((write) => {
              const original = write.key.replace(/^bind:/, "");
              return (
                <li key={`${write.key} ${write.path}`}>
                  {clone ? (
                    <Field label={`${original} for ${clone}`}>
                      <input
                        defaultValue={write.path}
                        onBlur={(event) => {
                          const path = event.target.value.trim();
                          if (path && path !== write.path) onMove(original, path);
                        }}
                      />
                    </Field>
                  ) : (
                    <code>{write.path}</code>
                  )}{" "}
                  <span className={`status ${write.replaced ? "tone-warn" : "tone-off"}`}>
                    {write.replaced ? "will be replaced" : "will be created"}
                  </span>
                </li>
              );
            })}
          </ul>
        </fieldset>
      ) : (
        <p className="muted">Nothing is written outside the stack folder.</p>
      )}
      {skipped.length > 0 && (
        <details>
          <summary>Left out ({skipped.length})</summary>
          <ul className="plain">
            {skipped.map(([key, why]) => (
              <li key={key}>
                <code>{key.replace(/^(volume|bind):/, "")}</code>: {why}
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

const ATTRIBUTE: Record<string, string> = {
  mtime_ns: "times finer than a second",
  xattrs: "xattrs",
  acls: "ACLs",
  sparse: "sparseness",
  trusted_xattrs: "trusted.* xattrs",
};

/** What a part of the archive did not keep (its helper image had no GNU tar), said beside it. */
function NotKept({ fidelity }: { fidelity?: Fidelity | null }) {
  if (!fidelity || fidelity.tool === "gnu-tar") return null;
  const missing = fidelity.not_kept.map((attribute) => ATTRIBUTE[attribute] ?? attribute);
  return (
    <span className="warn-text small" title={`Read by ${fidelity.tool}: kept ${fidelity.kept.join(", ")}`}>
      {" "}
      not kept: {missing.join(", ")}
    </span>
  );
}
