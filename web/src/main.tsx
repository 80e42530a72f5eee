import { QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createBrowserRouter, RouterProvider } from "react-router";
import { AppRoutes } from "./App";
import { createQueryClient } from "./queryClient";
import "./styles.css";

const queryClient = createQueryClient();
// A data router (not <BrowserRouter>) so that pages can block navigation (useBlocker) while
// they hold unsaved edits; the routes themselves stay in <AppRoutes>.
const router = createBrowserRouter([{ path: "*", element: <AppRoutes /> }]);
const root = document.getElementById("root");
if (!root) throw new Error("#root element missing from index.html");

createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
