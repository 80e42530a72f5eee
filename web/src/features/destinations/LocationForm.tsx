import type { FolderLocation, RepositoryLocation, S3Settings } from "../../api/types";
import { Field } from "../../components/Field";
import { LOCATION_LABELS, type LocationType } from "./destinationTypes";
import { NEW_S3, S3Form, s3Settings } from "./S3Form";
import { NEW_SFTP, SftpForm, sftpSettings, type SftpDraft } from "./SftpForm";

/** A repository's location as typed: switching the type keeps what was typed for the others. */
export interface LocationDraft {
  type: LocationType;
  folder: FolderLocation;
  sftp: SftpDraft;
  s3: S3Settings;
}

export const NEW_LOCATION: LocationDraft = {
  type: "folder",
  folder: { type: "folder", path: "" },
  sftp: NEW_SFTP,
  s3: NEW_S3,
};

/** The location to send, nested under the repository's `settings.location`. */
export function locationOf(draft: LocationDraft): RepositoryLocation {
  switch (draft.type) {
    case "folder":
      return { type: "folder", path: draft.folder.path.trim() };
    case "sftp":
      return sftpSettings(draft.sftp);
    case "s3":
      return s3Settings(draft.s3);
  }
}

/** Where a repository is kept: the kind of place, then that place's own fields. */
export function LocationForm({
  draft,
  onChange,
}: {
  draft: LocationDraft;
  onChange: (next: (draft: LocationDraft) => LocationDraft) => void;
}) {
  return (
    <>
      <Field label="Location">
        <select value={draft.type} onChange={(e) => onChange((d) => ({ ...d, type: e.target.value as LocationType }))}>
          {(Object.keys(LOCATION_LABELS) as LocationType[]).map((type) => (
            <option key={type} value={type}>
              {LOCATION_LABELS[type]}
            </option>
          ))}
        </select>
      </Field>
      {draft.type === "folder" && (
        <>
          <Field label="Folder">
            <input
              required
              minLength={2}
              maxLength={1000}
              pattern="/.+"
              title="An absolute folder, starting with /"
              placeholder="/mnt/backups/stackyard"
              autoComplete="off"
              spellCheck={false}
              value={draft.folder.path}
              onChange={(e) => onChange((d) => ({ ...d, folder: { type: "folder", path: e.target.value } }))}
            />
          </Field>
          <p className="muted small">
            An absolute folder as this service sees it: a disk, or a mount (NFS too). No sign-in secrets.
          </p>
        </>
      )}
      {draft.type === "sftp" && (
        <>
          <SftpForm draft={draft.sftp} onChange={(patch) => onChange((d) => ({ ...d, sftp: { ...d.sftp, ...patch } }))} />
          <p className="muted small">The server's host key is pinned when the repository is opened here.</p>
        </>
      )}
      {draft.type === "s3" && (
        <S3Form draft={draft.s3} onChange={(patch) => onChange((d) => ({ ...d, s3: { ...d.s3, ...patch } }))} />
      )}
    </>
  );
}
