import type { HostId } from "../../api/hosts";

/**
 * The address to give a git host for a webhook: this service's origin, `/api`, and the
 * path the host answered. The git hosts' deliveries always come to the central (an agent
 * behind a firewall is not reached by them): an agent answers the central's route that
 * passes them on, `/git/hooks/agents/{agent}/{repo}`, not knowing its own id here, which
 * is put in; an agent's own route (`/git/hooks/{repo}`, from an agent that said no more)
 * is said as that route too.
 */
export function webhookUrl(origin: string, path: string, host: HostId): string {
  let central = path;
  if (host !== null) {
    const own = /^\/git\/hooks\/([^/]+)$/.exec(path);
    central = own ? `/git/hooks/agents/${host}/${own[1]}` : path.replace("{agent}", String(host));
  }
  return `${origin}/api${central}`;
}
