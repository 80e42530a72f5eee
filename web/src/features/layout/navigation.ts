import type { Role } from "../../api/types";
import { can, type Capability } from "../auth/permissions";

export interface NavItem {
  to: string;
  label: string;
  /** Shown only to roles with this capability; everyone sees the others. */
  capability?: Capability;
}

export const NAV_ITEMS: readonly NavItem[] = [
  { to: "/", label: "Dashboard" },
  { to: "/stacks", label: "Stacks" },
  { to: "/files", label: "Files", capability: "files" },
  { to: "/backups", label: "Backups" },
  { to: "/destinations", label: "Destinations", capability: "destinations.manage" },
  { to: "/schedules", label: "Schedules", capability: "schedules.manage" },
  { to: "/agents", label: "Agents" },
  { to: "/settings", label: "Settings" },
];

/** The navigation a role sees. */
export function navItemsFor(role: Role | null | undefined): NavItem[] {
  return NAV_ITEMS.filter((item) => !item.capability || can(role, item.capability));
}
