import { describe, expect, it } from "vitest";
import { webhookUrl } from "./webhook";

describe("webhookUrl", () => {
  it("is this service's address, /api and the path, for this host's repository", () => {
    expect(webhookUrl("https://yard.example.com", "/git/hooks/r1", null)).toBe(
      "https://yard.example.com/api/git/hooks/r1",
    );
  });

  it("is the central's route that passes it on, for an agent's repository", () => {
    expect(webhookUrl("https://yard.example.com", "/git/hooks/r1", 3)).toBe(
      "https://yard.example.com/api/git/hooks/agents/3/r1",
    );
    // An agent names the central's route, not knowing its own id there.
    expect(webhookUrl("https://yard.example.com", "/git/hooks/agents/{agent}/r1", 3)).toBe(
      "https://yard.example.com/api/git/hooks/agents/3/r1",
    );
    // A path with the agent's id in it already is kept.
    expect(webhookUrl("https://yard.example.com", "/git/hooks/agents/3/r1", 3)).toBe(
      "https://yard.example.com/api/git/hooks/agents/3/r1",
    );
  });
});
