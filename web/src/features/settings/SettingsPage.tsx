import type { MouseEvent } from "react";
import { useCan } from "../auth/permissions";
import { useCurrentUser } from "../auth/queries";
import { RepositoriesSection } from "../git/RepositoriesSection";
import { VersionSection } from "../system/VersionSection";
import { AccountSection } from "./AccountSection";
import { AuditSection } from "./AuditSection";
import { DefaultUpdatePolicySection } from "./DefaultUpdatePolicySection";
import { IdentityProviderSection } from "./IdentityProviderSection";
import { RegistriesSection } from "./RegistriesSection";
import { TokensSection } from "./TokensSection";
import { UsersSection } from "./UsersSection";

/** A section of the page: its heading's id (each section names itself by it) and its link's text. */
interface Part {
  heading: string;
  label: string;
}

/**
 * Links to the page's sections, at its side on a wide screen (staying in view) and above
 * them on a narrow one: a link scrolls to its section and moves the focus to its heading.
 */
function SectionLinks({ parts }: { parts: Part[] }) {
  function jump(event: MouseEvent<HTMLAnchorElement>, heading: string) {
    const target = document.getElementById(heading);
    if (!target) return;
    event.preventDefault();
    (target.closest("section") ?? target).scrollIntoView({ block: "start" });
    if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    target.focus({ preventScroll: true });
  }
  return (
    <nav className="section-links" aria-label="Settings sections">
      <ul className="plain">
        {parts.map((part) => (
          <li key={part.heading}>
            <a href={`#${part.heading}`} onClick={(event) => jump(event, part.heading)}>
              {part.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

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
  const parts: Part[] = [
    ...(!due ? [{ heading: "version-title", label: "Stackyard version" }] : []),
    { heading: "account-title", label: "Account" },
    ...(!due ? [{ heading: "tokens-title", label: "API tokens" }] : []),
    ...(!due && mayManageUsers
      ? [
          { heading: "users-title", label: "Users" },
          { heading: "identity-provider-title", label: "Identity provider" },
        ]
      : []),
    ...(!due && mayManageRegistries ? [{ heading: "registries-title", label: "Registry credentials" }] : []),
    ...(!due && maySetDefaultPolicy ? [{ heading: "default-policy-title", label: "Default update policy" }] : []),
    ...(!due ? [{ heading: "git-title", label: "Git repositories" }] : []),
    ...(!due && mayReadAudit ? [{ heading: "audit-title", label: "Audit log" }] : []),
  ];
  return (
    <main className="page settings-page">
      <h1>Settings</h1>
      <div className="settings-layout">
        {parts.length > 1 && <SectionLinks parts={parts} />}
        <div className="settings-sections">
          {!due && <VersionSection />}
          <AccountSection />
          {!due && <TokensSection />}
          {!due && mayManageUsers && <UsersSection />}
          {!due && mayManageUsers && <IdentityProviderSection />}
          {!due && mayManageRegistries && <RegistriesSection />}
          {!due && maySetDefaultPolicy && <DefaultUpdatePolicySection />}
          {!due && <RepositoriesSection />}
          {!due && mayReadAudit && <AuditSection />}
        </div>
      </div>
    </main>
  );
}
