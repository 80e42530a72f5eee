import type { DestinationSecrets, DestinationSettings, DestinationType } from "../../api/types";

export type SecretName = keyof DestinationSecrets;

export const TYPE_LABELS: Record<DestinationType, string> = {
  sftp: "SFTP",
  s3: "S3-compatible object storage",
  nfs: "NFS export",
};

/** The secrets each type signs in with (the server ignores the others). */
export const SECRETS_OF: Record<DestinationType, readonly SecretName[]> = {
  sftp: ["password", "private_key", "passphrase"],
  s3: ["secret_key"],
  nfs: [],
};

/** Where a destination keeps the archives, in one line. */
export function whereOf(settings: DestinationSettings): string {
  switch (settings.type) {
    case "sftp":
      return `${settings.username}@${settings.host}${settings.port === 22 ? "" : `:${settings.port}`}:${settings.folder || "~"}`;
    case "s3":
      return `${settings.bucket}${settings.prefix ? `/${settings.prefix}` : ""} at ${settings.endpoint_url}`;
    case "nfs":
      return `${settings.server}:${settings.export}${settings.subdirectory ? `/${settings.subdirectory}` : ""}`;
  }
}
