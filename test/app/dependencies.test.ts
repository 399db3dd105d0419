import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
const denoJson = JSON.parse(readFileSync(new URL("functions/api/deno.json", root), "utf8"));
const installed = (name: string) =>
  JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, root), "utf8")).version as string;

/**
 * The design card's packages: what this service is made of, by the owners' choice. deno-std is
 * served by Web APIs (JSR, its registry, is out of reach), so it has no pin.
 */
const CARD_RUNTIME = ["@supabase/supabase-js", "zod", "@upstash/ratelimit", "@upstash/redis"];
const CARD_TOOLS = ["supabase", "vitest"];

describe("the design card's packages", () => {
  for (const name of CARD_RUNTIME) {
    it(`${name} is a runtime dependency and in the function's import map`, () => {
      expect(pkg.dependencies[name], name).toBeDefined();
      expect(denoJson.imports[name], name).toBe(`npm:${name}@${pkg.dependencies[name]}`);
    });
  }
  for (const name of CARD_TOOLS) {
    it(`${name} is a development dependency`, () => {
      expect(pkg.devDependencies[name], name).toBeDefined();
    });
  }
});

describe("dependency pins", () => {
  const imports = Object.entries(denoJson.imports as Record<string, string>);

  it("maps every runtime dependency of package.json in the function's deno.json, but Deno itself, which runs it", () => {
    const mapped = new Set(imports.filter(([name]) => !name.endsWith("/")).map(([name]) => name));
    // A dependency so that a release's `npm ci --omit=dev` installs it (functions/production/release.sh).
    expect(pkg.dependencies.deno).toBe(installed("deno"));
    expect([...mapped].sort()).toEqual(Object.keys(pkg.dependencies).filter((name) => name !== "deno").sort());
  });

  for (const [name, specifier] of imports) {
    it(`pins ${name} in deno.json to the exact version of package.json`, () => {
      const match = /^npm:\/?((?:@[^/@]+\/)?[^/@]+)@([^/]+)\/?$/.exec(specifier);
      expect(match, specifier).not.toBeNull();
      const [, pkgName, version] = match!;
      expect(name.replace(/\/$/, "")).toBe(pkgName);
      expect(pkg.dependencies[pkgName]).toBe(version);
      expect(installed(pkgName)).toBe(version);
    });
  }
});
