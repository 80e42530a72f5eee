import { render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/errors";
import { ErrorBanner } from "./ErrorBanner";

describe("an error banner", () => {
  it("offers Retry for what may pass (an agent offline)", () => {
    render(<ErrorBanner error={new ApiError("Agent 'nas' is unreachable", 502)} onRetry={vi.fn()} />);
    expect(screen.getByRole("button", { name: "Retry" })).toBeInTheDocument();
  });

  it("offers no Retry for a refusal of the user's role, and says whose decision it is", () => {
    render(<ErrorBanner error={new ApiError("This action needs the operator role", 403)} onRetry={vi.fn()} />);
    expect(screen.queryByRole("button", { name: "Retry" })).not.toBeInTheDocument();
    expect(screen.getByRole("alert")).toHaveTextContent(
      "This action needs the operator role. Your role does not allow it: an admin can change your role.",
    );
  });
});
