import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { LOCAL_HOST } from "../../api/hosts";
import { updateStatusQueryOptions } from "./queries";

/** Beside the version in the sidebar: a newer release exists (details and the update in Settings). */
export function UpdateHint() {
  const status = useQuery(updateStatusQueryOptions(LOCAL_HOST));
  const latest = status.data?.update_available ? status.data.latest_version : null;
  if (!latest) return null;
  return (
    <div>
      <Link className="pill pill-update update-hint" to="/settings#version" title={`Stackyard ${latest} is available`}>
        Update available: {latest}
      </Link>
    </div>
  );
}
