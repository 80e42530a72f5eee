import type { User } from "../../api/types";
import { can, type Permission } from "../auth/permissions";

export interface NavItem {
  to: string;
  label: string;
  /** Shown only to users with this permission; everyone sees the others. */
  permission?: Permission;
}

export const NAV_ITEMS: readonly NavItem[] = [
  { to: "/", label: "Dashboard" },
  { to: "/stacks", label: "Stacks" },
  { to: "/containers", label: "Containers" },
  { to: "/disk", label: "Disk" },
  { to: "/files", label: "Files", permission: "files" },
  { to: "/backups", label: "Backups", permission: "backups.create" },
  { to: "/destinations", label: "Destinations", permission: "destinations.manage" },
  { to: "/schedules", label: "Schedules", permission: "schedules.manage" },
  { to: "/notifications", label: "Notifications", permission: "notifications.manage" },
  { to: "/agents", label: "Agents" },
  { to: "/settings", label: "Settings" },
];

/** The navigation `user` sees. */
export function navItemsFor(user: User | undefined): NavItem[] {
  return NAV_ITEMS.filter((item) => !item.permission || can(user, item.permission));
}
