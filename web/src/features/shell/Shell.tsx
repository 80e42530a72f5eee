import { useQuery } from "@tanstack/react-query";
import { NavLink, Outlet, useNavigate } from "react-router";
import { errorMessage } from "../../api/errors";
import { useCurrentUser, useLogout } from "../auth/queries";
import { navItemsFor } from "./navigation";
import { healthQueryOptions } from "./queries";

function AppVersion() {
  const health = useQuery(healthQueryOptions());
  // The test id marks the element only once it holds the real version, so a reader
  // that waits for it never sees a placeholder.
  if (health.data) {
    return (
      <span className="app-version" data-testid="app-version">
        v{health.data.version}
      </span>
    );
  }
  return (
    <span className="app-version" title={health.isError ? errorMessage(health.error) : undefined}>
      {health.isError ? "version unknown" : "…"}
    </span>
  );
}

function UserMenu() {
  const user = useCurrentUser();
  const logout = useLogout();
  const navigate = useNavigate();

  return (
    <div className="user-menu">
      {user && (
        <span className="user-name" title={`Signed in as ${user.username} (${user.role})`}>
          {user.username}
          <span className="badge">{user.role}</span>
        </span>
      )}
      <button
        type="button"
        disabled={logout.isPending}
        onClick={() => logout.mutate(undefined, { onSettled: () => void navigate("/login", { replace: true }) })}
      >
        Sign out
      </button>
    </div>
  );
}

/** The signed-in layout: brand and version, main navigation, user menu, and the page. */
export function Shell() {
  const user = useCurrentUser();
  return (
    <div className="shell">
      <aside className="sidebar">
        <div className="brand-block">
          <span className="brand">Stackyard</span> <AppVersion />
        </div>
        <nav aria-label="Main">
          <ul>
            {navItemsFor(user?.role).map((item) => (
              <li key={item.to}>
                <NavLink to={item.to} end={item.to === "/"}>
                  {item.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <UserMenu />
      </aside>
      <div className="content">
        <Outlet />
      </div>
    </div>
  );
}
