import type { ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import { Navigate, useLocation } from "react-router";
import { errorMessage, isUnauthorized } from "../../api/errors";
import { Loading } from "../../components/Loading";
import { meQueryOptions } from "./queries";

export interface LoginLocationState {
  from?: string;
}

/** Renders its children for a signed-in user; sends everybody else to /login. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const location = useLocation();
  const me = useQuery(meQueryOptions());

  if (me.isError && isUnauthorized(me.error)) {
    const state: LoginLocationState = { from: `${location.pathname}${location.search}${location.hash}` };
    return <Navigate to="/login" replace state={state} />;
  }
  if (me.data) return <>{children}</>;
  if (me.isError) {
    return (
      <main className="centered">
        <div className="card error-card" role="alert">
          <p>Cannot load your session: {errorMessage(me.error)}</p>
          <button type="button" onClick={() => void me.refetch()}>
            Retry
          </button>
        </div>
      </main>
    );
  }
  return (
    <main className="centered">
      <Loading />
    </main>
  );
}
