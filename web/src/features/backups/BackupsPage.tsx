import { ComingSoon } from "../../components/ComingSoon";

export function BackupsPage() {
  return <ComingSoon title="Backups">Back up and restore stacks, including volumes and bind-mounted folders.</ComingSoon>;
}
