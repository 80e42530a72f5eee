import type { HostId } from "../../api/hosts";

/**
 * The address to give a git host for a webhook: this service's origin, `/api`, and the
 * path the host answered. The git hosts' deliveries always come to the central (an agent
 * behind a firewall is not reached by them): for an agent's repository the central's
 * route `/git/hooks/agents/{agent}/{repo}` passes them on, so an agent's own path
 * (`/git/hooks/{repo}`) is said as that.
 */
export function webhookUrl(origin: string, path: string, host: HostId): string {
  const own = /^\/git\/hooks\/([^/]+)$/.exec(path);
  const central = host !== null && own ? `/git/hooks/agents/${host}/${own[1]}` : path;
  return `${origin}/api${central}`;
}
