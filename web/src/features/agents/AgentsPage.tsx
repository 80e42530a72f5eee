import { ComingSoon } from "../../components/ComingSoon";

export function AgentsPage() {
  return <ComingSoon title="Agents">Manage stacks on remote hosts through agents.</ComingSoon>;
}
