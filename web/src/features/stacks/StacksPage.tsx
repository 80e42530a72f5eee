import { ComingSoon } from "../../components/ComingSoon";

export function StacksPage() {
  return <ComingSoon title="Stacks">Start, stop, restart and update your Compose stacks, with image update checks.</ComingSoon>;
}
