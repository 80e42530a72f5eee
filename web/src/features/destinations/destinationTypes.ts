import type {
  DestinationSecrets,
  DestinationSettings,
  DestinationType,
  RepositoryLocation,
  S3Settings,
  SftpSettings,
} from "../../api/types";

/**
 * A secret a user types. A repository's `repository_key` is not one: it is this instance's
 * own key, made by the server with the repository and never shown.
 */
export type SecretName = Exclude<keyof DestinationSecrets, "repository_key">;

/** Where a repository is kept: a folder this service sees, an SFTP server, S3. */
export type LocationType = RepositoryLocation["type"];

/** The types the plain "Add a destination" dialog makes (a repository has its own). */
export type PlainType = Exclude<DestinationType, "repository">;

export const TYPE_LABELS: Record<DestinationType, string> = {
  sftp: "SFTP",
  s3: "S3-compatible object storage",
  nfs: "NFS export",
  repository: "Repository (restic)",
};

export const PLAIN_TYPES: readonly PlainType[] = ["sftp", "s3", "nfs"];

export const LOCATION_LABELS: Record<LocationType, string> = {
  folder: "A folder on this host (a disk, a mount)",
  sftp: "SFTP",
  s3: "S3-compatible object storage",
};

/** The secrets each plain type signs in with (the server ignores the others). */
export const SECRETS_OF: Record<PlainType, readonly SecretName[]> = {
  sftp: ["password", "private_key", "passphrase"],
  s3: ["secret_key"],
  nfs: [],
};

/** The secrets a repository's location signs in with: those of its place, none for a folder. */
export const LOCATION_SECRETS: Record<LocationType, readonly SecretName[]> = {
  folder: [],
  sftp: SECRETS_OF.sftp,
  s3: SECRETS_OF.s3,
};

/** The secrets a user may type for a destination with these settings. */
export function secretsOf(settings: DestinationSettings): readonly SecretName[] {
  return settings.type === "repository" ? LOCATION_SECRETS[settings.location.type] : SECRETS_OF[settings.type];
}

/** The SFTP server a destination reaches (a repository's location included), if any. */
export function sftpOf(settings: DestinationSettings): SftpSettings | null {
  if (settings.type === "sftp") return settings;
  if (settings.type === "repository" && settings.location.type === "sftp") return settings.location;
  return null;
}

function s3Where(settings: S3Settings): string {
  return `${settings.bucket}${settings.prefix ? `/${settings.prefix}` : ""} at ${settings.endpoint_url}`;
}

/** Where a repository is: its folder, `sftp://user@host:port/folder`, `endpoint bucket/prefix`. */
export function locationWhere(location: RepositoryLocation): string {
  switch (location.type) {
    case "folder":
      return location.path;
    case "sftp":
      // restic's own way: an absolute folder shows as `//srv/...`, one in the login folder as `/backups`.
      return `sftp://${location.username}@${location.host}:${location.port}/${location.folder}`;
    case "s3":
      return `${location.endpoint_url} ${location.bucket}${location.prefix ? `/${location.prefix}` : ""}`;
  }
}

/** Where a destination keeps the archives, in one line. */
export function whereOf(settings: DestinationSettings): string {
  switch (settings.type) {
    case "sftp":
      return `${settings.username}@${settings.host}${settings.port === 22 ? "" : `:${settings.port}`}:${settings.folder || "~"}`;
    case "s3":
      return s3Where(settings);
    case "nfs":
      return `${settings.server}:${settings.export}${settings.subdirectory ? `/${settings.subdirectory}` : ""}`;
    case "repository":
      return locationWhere(settings.location);
  }
}

/** A key as Stackyard prints it: twelve groups of four letters and digits (base32). */
const WRITTEN_KEY = /^([A-Za-z2-7]{4}[\s-]+){11}[A-Za-z2-7]{4}$/;

/**
 * The recovery key to send, as typed: one written down in Stackyard's groups is read back in
 * capitals with dashes (lower case and spaces are how people copy it); anything else (a
 * restic password of a repository made by hand) goes as it is, trimmed.
 */
export function recoveryKeyOf(typed: string): string {
  const key = typed.trim();
  if (!WRITTEN_KEY.test(key)) return key;
  return (key.toUpperCase().match(/[A-Z2-7]{4}/g) ?? []).join("-");
}

/** A destination's kind in a word or two, beside its name in a list to choose from. */
export function typeTag(settings: DestinationSettings): string {
  return settings.type === "repository" ? "restic repository" : settings.type.toUpperCase();
}
