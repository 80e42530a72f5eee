import { ComingSoon } from "../../components/ComingSoon";

export function SchedulesPage() {
  return <ComingSoon title="Schedules">Run backups on a schedule with retention pruning.</ComingSoon>;
}
