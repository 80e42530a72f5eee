import { Link } from "react-router";
import type { DiskUser } from "../../api/types";
import { useHost, withHost } from "../hosts/host";
import { isStackId } from "./filters";

/** Users shown before the rest fold under "N more". */
const SHOWN = 3;

function UserItem({ user }: { user: DiskUser }) {
  const host = useHost();
  if (!user.stack) return <li>{user.container ?? "a container"}</li>;
  return (
    <li>
      {isStackId(user.stack) ? (
        <Link to={withHost(`/stacks/${encodeURIComponent(user.stack)}`, host)}>{user.stack}</Link>
      ) : (
        user.stack
      )}
      {user.service && ` / ${user.service}`}
      <span className="muted small"> {user.container ? `(${user.container})` : "(no container)"}</span>
    </li>
  );
}

/**
 * What uses an object: each stack's service (a link to the stack, its container, or "no
 * container" for a stopped stack that names it), each container of no stack, or "nothing".
 */
export function UsedBy({ users }: { users: readonly DiskUser[] }) {
  if (users.length === 0) return <span className="muted">nothing</span>;
  const key = (user: DiskUser, index: number) => `${user.stack ?? ""}/${user.service ?? ""}/${user.container ?? index}`;
  return (
    <div className="used-by">
      <ul className="plain">
        {users.slice(0, SHOWN).map((user, index) => (
          <UserItem key={key(user, index)} user={user} />
        ))}
      </ul>
      {users.length > SHOWN && (
        <details>
          <summary className="small">{users.length - SHOWN} more</summary>
          <ul className="plain">
            {users.slice(SHOWN).map((user, index) => (
              <UserItem key={key(user, index + SHOWN)} user={user} />
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

/**
 * "protected", for an object a prune never takes: the reason shows on hover, and on a tap
 * or a key press (a phone has no hover); screen readers read it with the word.
 */
export function Protected({ reason }: { reason: string | null | undefined }) {
  if (!reason) return null;
  return (
    <details className="protected">
      <summary className="badge" title={reason}>
        protected<span className="visually-hidden">: {reason}</span>
      </summary>
      <span className="small muted">Never pruned: {reason}</span>
    </details>
  );
}
