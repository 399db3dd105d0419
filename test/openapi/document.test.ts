import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { scopedDatabase } from "../support/database.ts";
import { startServer, type RunningServer } from "../support/server.ts";

const here = new URL("./", import.meta.url).pathname;
const redocly = new URL("../../node_modules/.bin/redocly", import.meta.url).pathname;

/** Heads the committed types, which are openapi-typescript's output for the served document. */
const TYPES_HEADER = `/**
 * The types of Cadence's v2 interface: openapi-typescript's output for GET /api/v2/openapi.json.
 * Generated, do not edit: \`npx vitest run -u test/openapi/document.test.ts\` rewrites this file
 * and openapi.json from what the server serves.
 */

`;

/**
 * The OpenAPI document as integrators' tools read it. Its committed copies (openapi.json, and the
 * types the typed-client test is compiled against) must be what the real entry serves, so a change
 * to a route that is not regenerated here fails.
 */
/** A GET with its own Host header (fetch may not set one). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { host } }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    }).on("error", reject);
  });
}

describe("the served OpenAPI document (GET /api/v2/openapi.json)", () => {
  const database = scopedDatabase();
  let server: RunningServer;
  let served: string;
  let scratch: string;

  beforeAll(async () => {
    server = await startServer(database.serverEnv);
    // Asked for as on `npm start`'s default port: the local server's port is the one asked on.
    const response = await getWithHost(`${server.url}/api/v2/openapi.json`, "localhost:8000");
    expect(response.status).toBe(200);
    served = `${JSON.stringify(JSON.parse(response.body), null, 2)}\n`;
    scratch = mkdtempSync(join(tmpdir(), "cadence-openapi-"));
  });
  afterAll(async () => {
    await server?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("names the local server on the port it was asked on, which is npm start's PORT", async () => {
    const response = await fetch(`${server.url}/api/v2/openapi.json`);
    const document = (await response.json()) as { servers: Array<{ url: string; variables: { port?: { default: string } } }> };
    expect(document.servers[0].url).toBe("http://localhost:{port}");
    expect(document.servers[0].variables.port?.default).toBe(new URL(server.url).port);
  });

  it("is committed as served, in test/openapi/openapi.json", async () => {
    await expect(served).toMatchFileSnapshot("./openapi.json");
  });

  it("passes redocly lint with its recommended rules: 0 errors, 0 warnings", () => {
    const file = join(scratch, "openapi.json");
    writeFileSync(file, served);
    // recommended-strict in redocly.yaml makes every warning an error, so the exit status says both.
    const lint = spawnSync(redocly, ["lint", file, "--config", join(here, "redocly.yaml"), "--format=stylish"], {
      cwd: scratch,
      encoding: "utf8",
      env: childEnv({ REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_NOTIFICATIONS: "true" }),
      timeout: 60_000,
    });
    const output = `${lint.stdout}${lint.stderr}`;
    expect(lint.status, output).toBe(0);
    expect(output).toContain("Your API description is valid");
    expect(output).not.toMatch(/explicitly ignored/i);
  });

  it("is what openapi-typescript turns into the committed types (test/openapi/cadence-api.d.ts)", async () => {
    const types = TYPES_HEADER + astToString(await openapiTS(JSON.parse(served)));
    await expect(types).toMatchFileSnapshot("./cadence-api.d.ts");
  });
});
