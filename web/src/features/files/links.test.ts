import { describe, expect, it } from "vitest";
import { filesHref, folderLabel, isWithin, zipName } from "./links";

describe("files links", () => {
  it("builds the page's address with readable slashes", () => {
    expect(filesHref("")).toBe("/files");
    expect(filesHref("a/b c")).toBe("/files?path=a/b%20c");
    expect(filesHref("a", "a/x&y.yml")).toBe("/files?path=a&edit=a/x%26y.yml");
  });

  it("names folders and their zips", () => {
    expect(folderLabel("")).toBe("the stacks folder");
    expect(folderLabel("web/conf")).toBe("web/conf");
    expect(zipName("")).toBe("stacks.zip");
    expect(zipName("web/conf")).toBe("conf.zip");
  });

  it("tells a path inside another", () => {
    expect(isWithin("web/conf/a", "web/conf")).toBe(true);
    expect(isWithin("web/conf", "web/conf")).toBe(true);
    expect(isWithin("web/config", "web/conf")).toBe(false);
  });
});
