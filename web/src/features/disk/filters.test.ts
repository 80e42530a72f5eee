import { describe, expect, it } from "vitest";
import { makeDiskReport, makeImage } from "../../test/diskFixtures";
import { isStackId, ofRepositories, repositoryOf, stackRepositories, stacksOf } from "./filters";

describe("disk filters", () => {
  it.each([
    ["nginx:1.25", "nginx"],
    ["nginx", "nginx"],
    ["ghcr.io/acme/app:2", "ghcr.io/acme/app"],
    ["registry.lan:5000/app", "registry.lan:5000/app"],
    ["registry.lan:5000/app:3", "registry.lan:5000/app"],
    ["nginx@sha256:abc", "nginx"],
  ])("reads the repository of %s as the server does", (reference, repository) => {
    expect(repositoryOf(reference)).toBe(repository);
  });

  it("takes the repositories of the images stacks use or name, so an old tag of one is a stack's", () => {
    const images = makeDiskReport().images;
    const repositories = stackRepositories(images);
    expect([...repositories]).toEqual(["nginx"]);
    expect(ofRepositories(makeImage({ tags: ["nginx:1.19", "mirror/nginx:1"] }), repositories)).toBe(true);
    expect(ofRepositories(makeImage({ tags: ["adminer:4"] }), repositories)).toBe(false);
    expect(ofRepositories(makeImage({ tags: [], dangling: true }), repositories)).toBe(false);
  });

  it("lists every stack the report names, and links only those that are stacks of the host", () => {
    expect(stacksOf(makeDiskReport())).toEqual(["old (its folder is gone)", "web"]);
    expect(isStackId("web")).toBe(true);
    expect(isStackId("old (its folder is gone)")).toBe(false);
  });
});
