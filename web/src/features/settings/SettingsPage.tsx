import { useCan } from "../auth/permissions";
import { useCurrentUser } from "../auth/queries";
import { VersionSection } from "../system/VersionSection";
import { AccountSection } from "./AccountSection";
import { AuditSection } from "./AuditSection";
import { DefaultUpdatePolicySection } from "./DefaultUpdatePolicySection";
import { IdentityProviderSection } from "./IdentityProviderSection";
import { RegistriesSection } from "./RegistriesSection";
import { TokensSection } from "./TokensSection";
import { UsersSection } from "./UsersSection";

export function SettingsPage() {
  const mayManageUsers = useCan("admin.users");
  const mayManageRegistries = useCan("admin.registries");
  const mayReadAudit = useCan("admin.audit");
  // No permission of its own: the server lets admins only set a host's default policy.
  const user = useCurrentUser();
  const maySetDefaultPolicy = user?.role === "admin";
  if (user?.two_factor_due) {
    return (
      <main className="page">
        <h1>Settings</h1>
        <AccountSection />
      </main>
    );
  }
  return (
    <main className="page">
      <h1>Settings</h1>
      <VersionSection />
      <AccountSection />
      <TokensSection />
      {mayManageUsers && <UsersSection />}
      {mayManageUsers && <IdentityProviderSection />}
      {mayManageRegistries && <RegistriesSection />}
      {maySetDefaultPolicy && <DefaultUpdatePolicySection />}
      {mayReadAudit && <AuditSection />}
    </main>
  );
}
