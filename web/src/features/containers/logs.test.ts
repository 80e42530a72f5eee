import { describe, expect, it } from "vitest";
import type { LogLine } from "../../api/types";
import { appendBounded, lineHtml, logDownloadUrl, logStreamUrl, matches, stripAnsi } from "./logs";

const line = (text: string, container = "app-web-1"): LogLine => ({
  time: "2026-11-23T15:00:00.123456789Z",
  container,
  service: "web",
  stream: "stdout",
  text,
});

describe("log views", () => {
  it("keeps only the newest lines", () => {
    expect(appendBounded([1, 2, 3], [4, 5], 4)).toEqual([2, 3, 4, 5]);
    expect(appendBounded([1], [2, 3, 4, 5, 6], 3)).toEqual([4, 5, 6]);
    expect(appendBounded([], [1], 3)).toEqual([1]);
  });

  it("searches the text without its colour codes, and the container's name", () => {
    expect(matches(line("\u001b[31mERROR\u001b[0m disk full"), "error disk")).toBe(true);
    expect(matches(line("all fine"), "error")).toBe(false);
    expect(matches(line("x", "db-1"), "DB-1")).toBe(true);
    expect(stripAnsi("\u001b[1;32mok\u001b[0m")).toBe("ok");
  });

  it("renders colours and escapes everything else", () => {
    const html = lineHtml("\u001b[31mred\u001b[0m <b>&");
    expect(html).toContain("red");
    expect(html).toMatch(/<span class="ansi-red-fg">red<\/span>/);
    expect(html).toContain("&lt;b&gt;&amp;");
    expect(html).not.toContain("<b>");
  });

  it("builds the stream and download addresses", () => {
    expect(logStreamUrl(null, "my stack", { service: "web", tail: 100 })).toBe(
      "/api/stacks/my%20stack/logs?service=web&tail=100",
    );
    expect(logStreamUrl(null, "app")).toBe("/api/stacks/app/logs");
    expect(logDownloadUrl(null, "app", { service: "db" })).toBe("/api/stacks/app/logs/download?service=db");
    expect(logStreamUrl(null, "app", { container: "app-db-2" })).toBe("/api/stacks/app/logs?container=app-db-2");
    // On an agent, through the central's proxy.
    expect(logStreamUrl(4, "app", { tail: 10 })).toBe("/api/agents/4/stacks/app/logs?tail=10");
    expect(logDownloadUrl(4, "app")).toBe("/api/agents/4/stacks/app/logs/download");
  });
});
