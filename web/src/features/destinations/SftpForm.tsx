import type { SftpSettings } from "../../api/types";
import { Field } from "../../components/Field";

/** SFTP settings as typed: the port is text until it is sent. */
export type SftpDraft = Omit<SftpSettings, "port"> & { port: string };

export const NEW_SFTP: SftpDraft = { type: "sftp", host: "", port: "22", username: "", folder: "" };

export function sftpDraft(settings: SftpSettings): SftpDraft {
  return { ...settings, port: String(settings.port) };
}

export function sftpSettings(draft: SftpDraft): SftpSettings {
  return { ...draft, host: draft.host.trim(), port: Number(draft.port) };
}

/** Where on an SFTP server: host, port, the user signed in as, the folder. */
export function SftpForm({ draft, onChange }: { draft: SftpDraft; onChange: (patch: Partial<SftpDraft>) => void }) {
  return (
    <>
      <Field label="Host">
        <input required maxLength={253} autoComplete="off" value={draft.host} onChange={(e) => onChange({ host: e.target.value })} />
      </Field>
      <Field label="Port">
        <input
          required
          type="number"
          min={1}
          max={65535}
          value={draft.port}
          onChange={(e) => onChange({ port: e.target.value })}
        />
      </Field>
      <Field label="Username">
        <input
          required
          maxLength={128}
          autoComplete="off"
          value={draft.username}
          onChange={(e) => onChange({ username: e.target.value })}
        />
      </Field>
      <Field label="Folder">
        <input
          maxLength={1000}
          placeholder="backups (relative to the login folder unless it starts with /)"
          value={draft.folder}
          onChange={(e) => onChange({ folder: e.target.value })}
        />
      </Field>
    </>
  );
}
