import { lazy, Suspense } from "react";
import { Route, Routes } from "react-router";
import { Loading } from "./components/Loading";
import { UnsavedChangesGuard } from "./components/useUnsavedChanges";
import { LoginPage } from "./features/auth/LoginPage";
import { RequireAuth } from "./features/auth/RequireAuth";
import { AgentsPage } from "./features/agents/AgentsPage";
import { BackupsPage } from "./features/backups/BackupsPage";
import { ContainersPage } from "./features/containers/ContainersPage";
import { DashboardPage } from "./features/dashboard/DashboardPage";
import { DestinationsPage } from "./features/destinations/DestinationsPage";
import { DiskPage } from "./features/disk/DiskPage";
import { FilesPage } from "./features/files/FilesPage";
import { Layout } from "./features/layout/Layout";
import { NotFoundPage } from "./features/layout/NotFoundPage";
import { NotificationsPage } from "./features/notifications/NotificationsPage";
import { SchedulesPage } from "./features/schedules/SchedulesPage";
import { SettingsPage } from "./features/settings/SettingsPage";
import { StackDetailPage } from "./features/stacks/StackDetailPage";
import { StackListPane } from "./features/stacks/StackListPane";
import { StacksPage } from "./features/stacks/StacksPage";

/** The terminal (xterm.js) is loaded when a shell is opened, in a chunk of its own. */
const ShellPage = lazy(() => import("./features/containers/ShellPage").then((m) => ({ default: m.ShellPage })));

/**
 * All routes; the router itself (a data router, browser or memory) is provided by the
 * caller. The guard asks before leaving a page with unsaved edits.
 */
export function AppRoutes() {
  return (
    <>
      <UnsavedChangesGuard />
      <Routes>
        <Route path="/login" element={<LoginPage />} />
        <Route
          element={
            <RequireAuth>
              <Layout />
            </RequireAuth>
          }
        >
          <Route index element={<DashboardPage />} />
          <Route path="stacks" element={<StacksPage />} />
          <Route
            path="stacks/:id"
            element={
              <div className="stack-workspace">
                <StackListPane />
                <StackDetailPage />
              </div>
            }
          />
          <Route
            path="stacks/:id/shell/:container"
            element={
              <Suspense fallback={<Loading />}>
                <ShellPage />
              </Suspense>
            }
          />
          <Route path="containers" element={<ContainersPage />} />
          <Route path="disk" element={<DiskPage />} />
          <Route path="files" element={<FilesPage />} />
          <Route path="backups" element={<BackupsPage />} />
          <Route path="destinations" element={<DestinationsPage />} />
          <Route path="schedules" element={<SchedulesPage />} />
          <Route path="notifications" element={<NotificationsPage />} />
          <Route path="agents" element={<AgentsPage />} />
          <Route path="settings" element={<SettingsPage />} />
          <Route path="*" element={<NotFoundPage />} />
        </Route>
      </Routes>
    </>
  );
}
