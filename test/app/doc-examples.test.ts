import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { PG_CLIENT_BIN } from "../support/postgres-server.ts";
import { endProcessesNaming, type RunningServer, startServer } from "../support/server.ts";

const root = new URL("../../", import.meta.url).pathname;

/** The documents whose examples run, in the order a reader meets them. */
const DOCUMENTS = ["README.md", "sql/README.md", "supabase/README.md", "functions/README.md"];

/**
 * A block fenced as ```sh demo or ```sql demo runs as written against `npm start` on the demo
 * data; words after `demo` (NAME=value) are the variables the server is started with for it,
 * otherwise those of the README's start line. A ```sql demo block runs in psql as the docs run it
 * on the local default database: `PGPASSWORD="$(cat .data/sql-password)" psql -h 127.0.0.1 -p 54322
 * -U staff postgres`, on this server's port and with its DATA_DIR's password.
 */
interface Example {
  document: string;
  index: number;
  language: "sh" | "sql";
  env?: Record<string, string>;
  text: string;
}

function examplesOf(document: string): Example[] {
  const markdown = readFileSync(join(root, document), "utf8");
  return [...markdown.matchAll(/^```(sh|sql) demo([^\n]*)\n([\s\S]*?)^```$/gm)].map((match, index) => {
    const words = match[2].trim().split(/\s+/).filter(Boolean);
    const env = words.length > 0 ? Object.fromEntries(words.map((word) => word.split(/=(.*)/s).slice(0, 2))) : undefined;
    return { document, index: index + 1, language: match[1] as "sh" | "sql", env, text: match[3] };
  });
}

/** The variables the README starts the server with for its examples. */
function readmeStartEnv(): Record<string, string> {
  const line = /^((?:[A-Z_]+=\S+ )+)npm start$/m.exec(readFileSync(join(root, "README.md"), "utf8"));
  if (!line) throw new Error("README.md has no `NAME=value ... npm start` line for its examples");
  return Object.fromEntries(line[1].trim().split(" ").map((word) => word.split(/=(.*)/s).slice(0, 2)));
}

function run(command: string, args: string[], input: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("exit", (code) => resolve({ code: code ?? 1, output }));
    // A program that exits without reading its input (psql refused at the door) closes the pipe: its exit says why.
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

/** What an example prints only when it did not work as its document says. */
const BROKEN = [
  // An answer's body, not the OpenAPI document's example of one.
  /(^|\}|\n)\{"error":"invalid signature"\}/, /(^|\}|\n)\{"message":"internal error"/, /ERROR: /, /INSERT 0 0/, /UPDATE 0\b/, /DELETE 0\b/,
  /command not found/, /Unknown option/, /^FAIL /m, /Could not resolve host/, /Connection refused/,
];

describe("every operating example in the docs runs as written on the demo data, pasted whole against npm start", () => {
  let parent: string;
  let dataDir: string;
  const defaultEnv = readmeStartEnv();
  let server: RunningServer | undefined;
  let serverEnv = "";

  /** The server an example needs, restarted on the same data when its variables differ (as a reader would). */
  async function serverFor(env: Record<string, string>): Promise<RunningServer> {
    if (server && serverEnv === JSON.stringify(env)) return server;
    await server?.stop();
    server = undefined;
    // The examples show what the docs say they print, not the 2 s a request may wait on the database:
    // beside two CPU-bound processes the embedded database (then PGlite) took longer over an
    // onboarding, which answered 500 "the account could not be created" as an outage should. Its
    // largest value leaves only a hang.
    server = await startServer({ DATA_DIR: dataDir, DATABASE_DEADLINE_MS: "60000", ...env });
    serverEnv = JSON.stringify(env);
    return server;
  }

  // The data a first `npm start` leaves: a new DATA_DIR, which the first server initialises, migrates and seeds.
  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), "cadence-docs-"));
    dataDir = join(parent, "data");
    await serverFor(defaultEnv);
  });
  afterAll(async () => {
    await server?.stop();
    if (parent) {
      endProcessesNaming(parent);
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it("the README starts the server with both signing secrets, so both schemes' examples answer", () => {
    expect(Object.keys(defaultEnv).sort()).toEqual(["SIGNING_SECRET", "STANDARD_WEBHOOKS_SECRET"]);
  });

  const examples = DOCUMENTS.flatMap(examplesOf);
  it("finds the examples of kiosk health, local time, alerts, venues, rotation, retries in both schemes and limits", () => {
    const all = examples.map((example) => `${JSON.stringify(example.env ?? {})}\n${example.text}`).join("\n");
    for (const part of ["kiosk_status", "local_time", "kiosk_uptime", "venue_addresses", "SIGNING_SECRET_PREVIOUS", "--scheme standard-webhooks", "--idempotency-key", "--limits"]) {
      expect(all).toContain(part);
    }
  });

  for (const example of examples) {
    it(`${example.document}, example ${example.index} (${example.language})`, async () => {
      const running = await serverFor(example.env ?? defaultEnv);
      const port = new URL(running.url).port;
      const staffPassword = join(dataDir, "sql-password");
      // A shell line reaches this server's database as the docs' reaches `npm start`'s: its port, its DATA_DIR.
      const text = example.text
        .replaceAll("localhost:8000", `127.0.0.1:${port}`)
        .replaceAll("-p 54322", `-p ${running.sqlPort}`)
        .replaceAll(".data/sql-password", staffPassword);
      const env = childEnv({ PORT: port, PATH: `${root}node_modules/.bin:${process.env.PATH}` });
      const { code, output } = example.language === "sql"
        ? await run(
          `${PG_CLIENT_BIN}/psql`,
          ["-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(running.sqlPort), "-U", "staff", "postgres", "-f", "-"],
          text,
          { ...env, PGPASSWORD: readFileSync(staffPassword, "utf8").trim() },
        )
        : await run("sh", ["-e"], text, env);
      const tail = output.slice(-3000);
      expect(code, tail).toBe(0);
      for (const broken of BROKEN) expect(output.match(broken)?.[0], tail).toBeUndefined();
      // Every signed onboarding, piped to sh or sent by curl itself, was carried out (or replayed).
      const onboardings = text.split("\n").filter((line) => /\| sh\b|^curl .*\/automations\/create\/account/.test(line)).length;
      expect(output.split('"success":true').length - 1, tail).toBe(onboardings);
    });
  }

  it("npm run sign -- --help lists its options, --url among them, and exits 0", async () => {
    const { code, output } = await run("npm", ["run", "-s", "sign", "--", "--help"], "", childEnv({ PATH: `${root}node_modules/.bin:${process.env.PATH}` }));
    expect(code).toBe(0);
    expect(output).toContain("--url              the server's base URL (default http://localhost:$PORT");
  });
});
