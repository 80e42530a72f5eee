import { useCurrentUser } from "../auth/queries";
import { AccountSection } from "./AccountSection";
import { AuditSection } from "./AuditSection";
import { RegistriesSection } from "./RegistriesSection";
import { TokensSection } from "./TokensSection";
import { UsersSection } from "./UsersSection";

export function SettingsPage() {
  const user = useCurrentUser();
  const isAdmin = user?.role === "admin";
  return (
    <main className="page">
      <h1>Settings</h1>
      <AccountSection />
      <TokensSection />
      {isAdmin && (
        <>
          <UsersSection />
          <RegistriesSection />
          <AuditSection />
        </>
      )}
    </main>
  );
}
