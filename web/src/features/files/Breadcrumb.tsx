import { Link } from "react-router";
import { useHost } from "../hosts/host";
import { filesHref } from "./links";
import { pathSegments } from "./paths";

/** Stacks folder / a / b, each part a link; the current folder is marked. */
export function Breadcrumb({ folder }: { folder: string }) {
  const host = useHost();
  const parts = pathSegments(folder);
  return (
    <nav aria-label="Breadcrumb" className="breadcrumb files-breadcrumb">
      <ol>
        <li>
          <Link to={filesHref("", null, host)} aria-current={parts.length === 0 ? "page" : undefined}>
            Stacks folder
          </Link>
        </li>
        {parts.map((part, i) => {
          const path = parts.slice(0, i + 1).join("/");
          return (
            <li key={path}>
              <Link to={filesHref(path, null, host)} aria-current={i === parts.length - 1 ? "page" : undefined}>
                {part}
              </Link>
            </li>
          );
        })}
      </ol>
    </nav>
  );
}
