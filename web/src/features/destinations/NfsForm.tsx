import type { NfsSettings } from "../../api/types";
import { Field } from "../../components/Field";

export const NEW_NFS: NfsSettings = { type: "nfs", server: "", export: "", options: "rw", subdirectory: "" };

/** Which NFS export: server, export, mount options, a subdirectory in it. */
export function NfsForm({ draft, onChange }: { draft: NfsSettings; onChange: (patch: Partial<NfsSettings>) => void }) {
  return (
    <>
      <Field label="Server">
        <input required maxLength={253} value={draft.server} onChange={(e) => onChange({ server: e.target.value })} />
      </Field>
      <Field label="Export">
        <input
          required
          maxLength={1000}
          placeholder="/srv/backups"
          value={draft.export}
          onChange={(e) => onChange({ export: e.target.value })}
        />
      </Field>
      <Field label="Mount options">
        <input maxLength={500} value={draft.options} onChange={(e) => onChange({ options: e.target.value })} />
      </Field>
      <Field label="Subdirectory">
        <input maxLength={500} value={draft.subdirectory} onChange={(e) => onChange({ subdirectory: e.target.value })} />
      </Field>
      <p className="muted small">No sign-in secrets: the server trusts this host. An NFS export is tested once saved.</p>
    </>
  );
}
