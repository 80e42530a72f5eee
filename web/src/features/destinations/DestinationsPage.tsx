import { ComingSoon } from "../../components/ComingSoon";

export function DestinationsPage() {
  return <ComingSoon title="Destinations">Send backups to SFTP, object storage or NFS destinations.</ComingSoon>;
}
