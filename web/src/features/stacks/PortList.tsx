import { useHostInfo } from "../hosts/capabilities";
import { useHost } from "../hosts/host";
import { portInfos } from "./ports";

/** The name the containers of the host shown are reached at: an agent's, or this page's. */
function useServiceHostname(): string {
  const agent = useHostInfo(useHost()).agent;
  if (agent) {
    try {
      return new URL(agent.url).hostname;
    } catch {
      return "";
    }
  }
  return typeof window !== "undefined" ? window.location.hostname : "";
}

/**
 * A container's ports; a published TCP port is a link to its host's name (the agent's for
 * a stack on an agent, else this page's) at the host port (https for 443 and 8443),
 * opening in a new tab.
 */
export function PortList({ ports }: { ports: string[] }) {
  const hostname = useServiceHostname();
  if (ports.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="plain ports">
      {portInfos(ports, hostname).map((port) => (
        <li key={port.text}>
          {port.url ? (
            <a href={port.url} target="_blank" rel="noopener noreferrer" title={`Open ${port.url} in a new tab`}>
              <code>{port.text}</code>
            </a>
          ) : (
            <code>{port.text}</code>
          )}
        </li>
      ))}
    </ul>
  );
}
