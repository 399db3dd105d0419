import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const deno = `${root}node_modules/.bin/deno`;
const out = mkdtempSync(join(tmpdir(), "cadence-bundle-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/**
 * The most each edge function may weigh, bundled by `deno bundle` (MiB, as deno prints it): a little
 * above what each weighed (api 2.02, outbox 1.09, auth-email-hook 1.70). zod is most of api and
 * auth-email-hook (0.72): @hono/zod-openapi hands zod's `z` namespace to zod-to-openapi as a value,
 * which keeps all 40 locales (0.35). outbox does without it and imports zod as `* as z`, so keeps
 * only what it calls (0.18). Then @upstash/redis (0.18, api only), node-postgres with its type
 * parsers (0.18; postgres.js, which it replaced, was 0.07) and auth-js's admin client (0.08).
 */
const CEILING_MIB: Record<string, number> = { api: 2.2, outbox: 1.2, "auth-email-hook": 1.85 };

/**
 * Modules that only a local or self-hosted server runs, never in an edge function: PGlite and its
 * assets, and the `REDIS_URL` store's connection and protocol (known by their strings).
 */
const LOCAL_ONLY = [/@electric-sql[+/]pglite/, /pglite\.(wasm|data)|initdb\.wasm/, /redis_handshake_refused/, /not a RESP2 reply/];

async function bundle(name: string): Promise<string> {
  const file = join(out, `${name}.js`);
  await promisify(execFile)(deno, ["bundle", `functions/${name}/index.ts`, "-o", file], { cwd: root });
  return file;
}

describe("the edge functions, bundled as Supabase deploys them", () => {
  for (const name of Object.keys(CEILING_MIB)) {
    it(`${name}: holds no PGlite and no Redis connection, and weighs under ${CEILING_MIB[name]} MiB`, async () => {
      const file = await bundle(name);
      const text = readFileSync(file, "utf8");
      for (const pattern of LOCAL_ONLY) expect(text, String(pattern)).not.toMatch(pattern);
      const mib = statSync(file).size / 2 ** 20;
      console.log(`bundle ${name}: ${mib.toFixed(2)} MiB`);
      expect(mib).toBeLessThan(CEILING_MIB[name]);
    });
  }
});
