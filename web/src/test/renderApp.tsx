import { QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { createMemoryRouter, RouterProvider, useLocation } from "react-router";
import { AppRoutes } from "../App";
import { createQueryClient } from "../queryClient";

function LocationProbe() {
  const location = useLocation();
  return (
    <output data-testid="location" hidden>
      {location.pathname}
    </output>
  );
}

/**
 * Renders the whole app at `path`, as the browser would, with a fresh query cache and a
 * data router (as main.tsx does), so navigation blocking works; `router` is returned too.
 * Tests on fake timers pass `advanceTimers` (`vi.advanceTimersByTime`) for the user's clicks.
 */
export function renderApp(path = "/", options: { advanceTimers?: (ms: number) => unknown } = {}) {
  const queryClient = createQueryClient({ retry: false });
  const advance = options.advanceTimers;
  const user = userEvent.setup(advance ? { advanceTimers: (ms: number) => void advance(ms) } : {});
  const router = createMemoryRouter(
    [
      {
        path: "*",
        element: (
          <>
            <AppRoutes />
            <LocationProbe />
          </>
        ),
      },
    ],
    { initialEntries: [path] },
  );
  const result = render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return { ...result, user, queryClient, router };
}
