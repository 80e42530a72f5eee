import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState } from "react";
import { Link, Navigate, NavLink, Outlet, useLocation } from "react-router";
import { errorMessage } from "../../api/errors";
import { confirmLeaving } from "../../components/useUnsavedChanges";
import { useCurrentUser, useLogout } from "../auth/queries";
import { UpdateHint } from "../system/UpdateHint";
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
        onClick={() => {
          if (!confirmLeaving()) return; // unsaved edits: the user chose to stay
          logout.mutate();
        }}
      >
        Sign out
      </button>
    </div>
  );
}

/**
 * The signed-in layout: brand and version, main navigation, user menu, and the page.
 * Under 900 px wide the sidebar folds into a "Menu" button in a top bar (styles.css);
 * the menu closes on navigation and on Escape.
 */
export function Layout() {
  const user = useCurrentUser();
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const [shownAt, setShownAt] = useState(location.key);
  const menuId = useId();
  const menuButton = useRef<HTMLButtonElement>(null);
  if (shownAt !== location.key) {
    setShownAt(location.key);
    setMenuOpen(false);
  }

  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") {
        setMenuOpen(false);
        menuButton.current?.focus();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [menuOpen]);

  return (
    <div className={menuOpen ? "layout menu-open" : "layout"}>
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Stackyard</span>
        <button
          type="button"
          ref={menuButton}
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls={menuId}
          onClick={() => setMenuOpen((open) => !open)}
        >
          <span aria-hidden="true">☰</span> Menu
        </button>
      </header>
      <aside className="sidebar" id={menuId}>
        <div className="brand-block">
          <span className="brand">Stackyard</span> <AppVersion />
          <UpdateHint />
        </div>
        <nav aria-label="Main">
          <ul>
            {navItemsFor(user).map((item) => (
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
      <div className="content" id="content" tabIndex={-1}>
        {user?.two_factor_due && (
          <p className="notice-banner" role="status">
            An admin requires two-factor sign-in for your account: set it up below before anything else.
          </p>
        )}
        {user?.password_change_due && (
          <p className="notice-banner" role="status">
            You signed in with the one-time password printed at first start: choose your own under{" "}
            <Link to="/settings">Settings</Link>.
          </p>
        )}
        {/* Until two-factor is set up, the server refuses every other page. */}
        {user?.two_factor_due && location.pathname !== "/settings" ? <Navigate to="/settings" replace /> : <Outlet />}
      </div>
    </div>
  );
}
