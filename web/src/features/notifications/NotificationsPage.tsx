import { useQuery } from "@tanstack/react-query";
import { ErrorBanner } from "../../components/ErrorBanner";
import { useCan } from "../auth/permissions";
import { ChannelsSection } from "./ChannelsSection";
import { catalogueQueryOptions, rulesQueryOptions } from "./queries";
import { RulesSection } from "./RulesSection";

function Notifications() {
  const catalogue = useQuery(catalogueQueryOptions());
  const rules = useQuery(rulesQueryOptions());
  return (
    <main className="page">
      <h1>Notifications</h1>
      <p className="muted">
        Messages about what needs someone, on every host: failed updates and backups, containers that stop or
        restart, agents gone offline, disks filling up, newer images. Rules pick the events; channels carry them.
      </p>
      {catalogue.isError && <ErrorBanner error={catalogue.error} onRetry={() => void catalogue.refetch()} />}
      <ChannelsSection catalogue={catalogue.data} rules={rules.data} />
      <RulesSection catalogue={catalogue.data} rules={rules} />
    </main>
  );
}

/** Admins only (the sidebar shows it to them alone; the server refuses everybody else). */
export function NotificationsPage() {
  const mayManage = useCan("notifications.manage");
  if (!mayManage) {
    return (
      <main className="page">
        <h1>Notifications</h1>
        <p className="muted">Only admins manage notifications.</p>
      </main>
    );
  }
  return <Notifications />;
}
