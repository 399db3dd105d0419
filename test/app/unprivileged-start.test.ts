import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { startServer } from "../support/server.ts";

const root = new URL("../../", import.meta.url).pathname;
const isRoot = process.getuid?.() === 0;
/** Whether `nobody` can run this checkout's Deno: not where the checkout sits in a 0700 directory. */
const checkoutOpenToNobody = isRoot &&
  spawnSync("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "test", "-x", join(root, "node_modules/.bin/deno")]).status === 0;

/** The users of processes whose command line holds `text`, by `ps`: who the database runs as. */
function usersOf(text: string): string[] {
  const listed = execFileSync("ps", ["-eo", "user:32=,args="], { encoding: "utf8" });
  return listed.split("\n").filter((line) => line.includes(text)).map((line) => line.trim().split(/\s+/)[0]);
}

/** Resolves with the output once `pattern` appears in what `child` prints, or rejects with it when the child exits first. */
function printed(child: ReturnType<typeof spawn>, pattern: RegExp): Promise<string> {
  let output = "";
  return new Promise((resolve, reject) => {
    const hear = (chunk: Buffer) => {
      output += chunk;
      if (pattern.test(output)) resolve(output);
    };
    child.stdout?.on("data", hear);
    child.stderr?.on("data", hear);
    child.once("exit", (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
}

// PostgreSQL refuses to run as root, and a `postgres` user cannot enter a 0700 directory (/root on
// Debian 12, every mktemp -d): `npm start` works for root and for an ordinary user alike
// (functions/app/db/unprivileged.ts).
describe("npm start's own database, started by root or by an ordinary user", () => {
  it.skipIf(!isRoot)("as root, in a data directory inside a 0700 directory: serves the demo data, the database's files stay root's", async () => {
    const closed = mkdtempSync(join(tmpdir(), "cadence-closed-"));
    expect(statSync(closed).mode & 0o777).toBe(0o700);
    const dataDir = join(closed, "data");
    const server = await startServer({ DATA_DIR: dataDir });
    try {
      expect((await fetch(`${server.url}/api/v2/licenses/DEMO-0000-0000-0001/schedule`)).status).toBe(200);
      expect(statSync(join(dataDir, "postgres")).uid).toBe(0);
      expect(usersOf(`-D ${join(dataDir, "postgres")}`)).toContain("root");
    } finally {
      await server.stop();
      rmSync(closed, { recursive: true, force: true });
    }
  });

  it.skipIf(!isRoot)("as root where the kernel refuses the user namespace: one line naming the ways out, no stack trace", async () => {
    // util-linux's unshare as a locked-down container answers it (Docker's default seccomp profile).
    const parent = mkdtempSync(join(tmpdir(), "cadence-no-namespace-"));
    const bin = join(parent, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "unshare"), "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n", { mode: 0o755 });
    try {
      const refused = await startServer({ DATA_DIR: join(parent, "data"), PATH: `${bin}:${process.env.PATH}` }).then(
        async (server) => {
          await server.stop();
          return "started";
        },
        (error: Error) => error.message,
      );
      expect(refused).toMatch(/exited with 1/);
      expect(refused).toContain(
        "PostgreSQL does not run as root, and this machine refused the user namespace it would run in as an ordinary user (unshare: unshare failed: Operation not permitted): run npm start as an ordinary user, or set DATABASE_URL to a Postgres of your own",
      );
      expect(refused).not.toMatch(/Uncaught|at .*\.ts:\d+/);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it.skipIf(!checkoutOpenToNobody)("as an ordinary user (nobody), in a data directory of theirs: serves the demo data, the database runs as that user", async () => {
    const home = mkdtempSync(join(tmpdir(), "cadence-nobody-"));
    const nobody = Number(execFileSync("id", ["-u", "nobody"], { encoding: "utf8" }));
    const nogroup = Number(execFileSync("id", ["-g", "nobody"], { encoding: "utf8" }));
    chownSync(home, nobody, nogroup);
    const dataDir = join(home, "data");
    mkdirSync(join(home, "deno"));
    chownSync(join(home, "deno"), nobody, nogroup);
    const env = childEnv({ HOME: home, DENO_DIR: join(home, "deno"), DATA_DIR: dataDir, PORT: "0", SQL_PORT: "0" });
    const child = spawn(
      "setpriv",
      ["--reuid=nobody", "--regid=nogroup", "--clear-groups", join(root, "node_modules/.bin/deno"), "run", "-A", "functions/api/index.ts"],
      { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      const output = await printed(child, /"event":"listening","port":(\d+)/);
      const port = /"event":"listening","port":(\d+)/.exec(output)![1];
      expect((await fetch(`http://127.0.0.1:${port}/api/v2/licenses/DEMO-0000-0000-0001/schedule`)).status).toBe(200);
      expect(usersOf(`-D ${join(dataDir, "postgres")}`)).toEqual(expect.arrayContaining(["nobody"]));
      expect(usersOf(`-D ${join(dataDir, "postgres")}`)).not.toContain("root");
    } finally {
      child.kill("SIGTERM");
      await exited;
      rmSync(home, { recursive: true, force: true });
    }
    // The server's stop took its database with it.
    expect(usersOf(`-D ${join(dataDir, "postgres")}`)).toEqual([]);
  });
});
