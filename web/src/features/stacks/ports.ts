/** A container port as the engine lists it: "0.0.0.0:8080->80/tcp" or "80/tcp". */
export interface PortInfo {
  text: string;
  /** Where the published port opens in the browser; null when it is not web-reachable. */
  url: string | null;
  hostPort: number | null;
}

const PUBLISHED = /^(.*):(\d+)->(\d+)\/(tcp|udp|sctp)$/;
const HTTPS_PORTS = new Set([443, 8443]);

function isLoopback(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, "");
  return bare.startsWith("127.") || bare === "::1" || bare === "localhost";
}

/**
 * The link for a published TCP port: the page's own host name (the containers run on the
 * host that serves Stackyard) at the host port; https for 443 and 8443. Ports bound to the
 * loopback address only, and UDP ports, get no link.
 */
export function portInfo(text: string, hostname: string): PortInfo {
  const match = PUBLISHED.exec(text);
  if (!match) return { text, url: null, hostPort: null };
  const ip = match[1] ?? "";
  const hostPort = Number(match[2]);
  const proto = match[4];
  if (proto !== "tcp" || isLoopback(ip) || !hostname) return { text, url: null, hostPort };
  const scheme = HTTPS_PORTS.has(hostPort) ? "https" : "http";
  const host = hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
  return { text, url: `${scheme}://${host}:${hostPort}`, hostPort };
}

/** Ports of one container, the IPv4 and IPv6 bindings of one host port shown once. */
export function portInfos(ports: string[], hostname: string): PortInfo[] {
  const seen = new Set<string>();
  const out: PortInfo[] = [];
  for (const text of ports) {
    const info = portInfo(text, hostname);
    const key = info.url ?? text;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(info);
  }
  return out;
}
