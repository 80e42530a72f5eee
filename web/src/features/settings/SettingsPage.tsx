import { useCan } from "../auth/permissions";
import { VersionSection } from "../system/VersionSection";
import { AccountSection } from "./AccountSection";
import { AuditSection } from "./AuditSection";
import { RegistriesSection } from "./RegistriesSection";
import { TokensSection } from "./TokensSection";
import { UsersSection } from "./UsersSection";

export function SettingsPage() {
  const mayManageUsers = useCan("admin.users");
  const mayManageRegistries = useCan("admin.registries");
  const mayReadAudit = useCan("admin.audit");
  return (
    <main className="page">
      <h1>Settings</h1>
      <VersionSection />
      <AccountSection />
      <TokensSection />
      {mayManageUsers && <UsersSection />}
      {mayManageRegistries && <RegistriesSection />}
      {mayReadAudit && <AuditSection />}
    </main>
  );
}
