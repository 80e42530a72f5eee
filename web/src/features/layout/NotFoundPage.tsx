import { Link } from "react-router";

export function NotFoundPage() {
  return (
    <main className="page">
      <h1>Page not found</h1>
      <p className="muted">
        There is nothing here. <Link to="/">Back to the dashboard</Link>
      </p>
    </main>
  );
}
