export interface NavItem {
  to: string;
  label: string;
}

export const NAV_ITEMS: readonly NavItem[] = [
  { to: "/", label: "Dashboard" },
  { to: "/stacks", label: "Stacks" },
  { to: "/files", label: "Files" },
  { to: "/backups", label: "Backups" },
  { to: "/destinations", label: "Destinations" },
  { to: "/schedules", label: "Schedules" },
  { to: "/agents", label: "Agents" },
  { to: "/settings", label: "Settings" },
];
