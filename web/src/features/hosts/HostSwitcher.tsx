import { useQuery } from "@tanstack/react-query";
import { useNavigate } from "react-router";
import { agentsQueryOptions } from "../agents/queries";
import type { HostInfo } from "./capabilities";
import { parseHost, useHost, withHost } from "./host";

/**
 * Chooses the host a page shows: "This host" or one of the enabled agents. The choice is
 * the page's address (`page?host=3`), so links and reloads keep it; choosing goes to
 * `page` on the chosen host (a folder or a stack of one host means nothing on another).
 * Nothing is shown while there are no agents to choose.
 */
export function HostSwitcher({ page }: { page: string }) {
  const host = useHost();
  const agents = useQuery(agentsQueryOptions());
  const navigate = useNavigate();
  const choices = (agents.data ?? []).filter((agent) => agent.enabled || agent.id === host);
  if (host === null && choices.length === 0) return null;
  const known = choices.some((agent) => agent.id === host);

  return (
    <label className="field inline host-switcher">
      <span>Host</span>
      <select value={host ?? ""} onChange={(event) => void navigate(withHost(page, parseHost(event.target.value)))}>
        <option value="">This host</option>
        {choices.map((agent) => (
          <option key={agent.id} value={agent.id}>
            {agent.name}
            {agent.enabled ? "" : " (disabled)"}
          </option>
        ))}
        {host !== null && !known && <option value={host}>Agent {host}</option>}
      </select>
    </label>
  );
}

/** Shown instead of a page's content when its host cannot serve it. */
export function HostUnavailable({ reason }: { reason: string }) {
  return (
    <div className="card host-unavailable" role="status">
      <p>{reason}</p>
    </div>
  );
}

/** Under a page's title when it shows an agent: which host that is (its address). */
export function HostNote({ info }: { info: HostInfo }) {
  if (info.host === null) return null;
  return (
    <p className="host-note muted">
      On agent <strong>{info.name}</strong>
      {info.agent && (
        <>
          {" "}
          at <code>{info.agent.url}</code>
        </>
      )}
    </p>
  );
}
