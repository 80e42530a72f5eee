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
 */
export function renderApp(path = "/") {
  const queryClient = createQueryClient({ retry: false });
  const user = userEvent.setup();
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
