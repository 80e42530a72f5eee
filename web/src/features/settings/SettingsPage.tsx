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
  // Until a required two-factor sign-in is set up the server answers only for it: the
  // account alone. One tree either way, so that the account section (and the recovery codes
  // it shows once) stays mounted when set-up ends and the other sections appear.
  const due = user?.two_factor_due === true;
  return (
    <main className="page">
      <h1>Settings</h1>
      {!due && <VersionSection />}
      <AccountSection />
      {!due && <TokensSection />}
      {!due && mayManageUsers && <UsersSection />}
      {!due && mayManageUsers && <IdentityProviderSection />}
      {!due && mayManageRegistries && <RegistriesSection />}
      {!due && maySetDefaultPolicy && <DefaultUpdatePolicySection />}
      {!due && mayReadAudit && <AuditSection />}
    </main>
  );
}
