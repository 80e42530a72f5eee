import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { NavLink } from "react-router";
import { useHost, withHost } from "../hosts/host";
import { stacksQueryOptions } from "./queries";
import { STATE_LABEL, STATE_TONES } from "./state";

/**
 * The stacks of the host beside a stack's page (wide screens only, styles.css): switch
 * stacks without going back, find one by name. The list is the Stacks page's own query.
 */
export function StackListPane() {
  const host = useHost();
  const stacks = useQuery(stacksQueryOptions(host)).data ?? [];
  const [find, setFind] = useState("");
  const needle = find.trim().toLowerCase();
  const shown = needle ? stacks.filter((stack) => stack.id.includes(needle)) : stacks;
  return (
    <nav className="stack-list-pane" aria-label="Stacks of this host">
      <input
        type="search"
        aria-label="Find a stack"
        placeholder="Find a stack"
        value={find}
        onChange={(event) => setFind(event.target.value)}
      />
      <ul className="plain">
        {[...shown]
          .sort((a, b) => a.id.localeCompare(b.id))
          .map((stack) => (
            <li key={stack.id}>
              <NavLink to={withHost(`/stacks/${encodeURIComponent(stack.id)}`, host)} title={STATE_LABEL[stack.state]}>
                <span className={`dot tone-${STATE_TONES[stack.state]}`} aria-hidden="true" />
                <span className="stack-list-name">{stack.id}</span>
                <span className="visually-hidden"> ({STATE_LABEL[stack.state]})</span>
              </NavLink>
            </li>
          ))}
      </ul>
      {needle && shown.length === 0 && <p className="muted small">No stack matches.</p>}
    </nav>
  );
}
