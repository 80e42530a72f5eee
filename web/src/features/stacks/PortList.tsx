import { portInfos } from "./ports";

/**
 * A container's ports; a published TCP port is a link to this page's host name at the
 * host port (https for 443 and 8443), opening in a new tab.
 */
export function PortList({ ports }: { ports: string[] }) {
  if (ports.length === 0) return <span className="muted">—</span>;
  const hostname = typeof window !== "undefined" ? window.location.hostname : "";
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
