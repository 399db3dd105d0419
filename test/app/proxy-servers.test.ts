import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { childEnv } from "../support/child-env.ts";

const SCRIPT = new URL("../../functions/production/proxy-servers.sh", import.meta.url).pathname;
const UNIT = new URL("../../functions/production/cadence-proxy.service", import.meta.url).pathname;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cadence-proxy-servers-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the script as the unit does (output, the workers' environment file), with `env` beside. */
function run(settings: string, env: Record<string, string>) {
  const file = join(dir, "cadence.env");
  writeFileSync(file, settings);
  const output = join(dir, "servers", "proxy-servers.cfg");
  const result = spawnSync("sh", [SCRIPT, output, file], { env: childEnv(env), encoding: "utf8" });
  return { status: result.status, stderr: result.stderr, output, written: existsSync(output) ? readFileSync(output, "utf8") : undefined };
}

const servers = (written: string | undefined) => written?.split("\n").filter((line) => line.trim().startsWith("server "));

describe("functions/production/proxy-servers.sh, the proxy's backend from the workers' settings", () => {
  it("writes a server per worker at PORT+i-1, checked on ADMIN_PORT+i-1, the environment file's lines winning over the environment", () => {
    const { status, written } = run("DATABASE_URL=postgres://secret@db/x\nPORT=\"8100\"\n# PORT=1\nADMIN_PORT=9100\n", { PORT: "7000", CADENCE_WORKERS: "3" });
    expect(status).toBe(0);
    expect(servers(written)).toEqual([
      "    server w1 127.0.0.1:8100 port 9100",
      "    server w2 127.0.0.1:8101 port 9101",
      "    server w3 127.0.0.1:8102 port 9102",
    ]);
    expect(written).not.toContain("secret");
  });

  it("reads a port with leading zeros as the workers do (08000 is 8000)", () => {
    const { status, written } = run("PORT=08000\nADMIN_PORT=0009000\n", { CADENCE_WORKERS: "01" });
    expect(status).toBe(0);
    expect(servers(written)).toEqual(["    server w1 127.0.0.1:8000 port 9000"]);
  });

  it("refuses what is no number, 0 workers, and ports past 65535 for the last worker, naming the setting and writing nothing", () => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ["PORT=80a\n", { CADENCE_WORKERS: "2" }, /PORT must be a number \(it is '80a'\)/],
      ["PORT=8000\n", { CADENCE_WORKERS: "0" }, /CADENCE_WORKERS must be 1 or more/],
      ["PORT=8000\n", {}, /CADENCE_WORKERS must be a number/],
      ["PORT=65535\n", { CADENCE_WORKERS: "2" }, /PORT=65535 leaves no port/],
      ["ADMIN_PORT=99999999999999999999\n", { CADENCE_WORKERS: "2" }, /ADMIN_PORT is past 65535/],
    ];
    for (const [settings, env, message] of cases) {
      const { status, stderr, written } = run(settings, env);
      expect({ status, stderr }).toEqual({ status: 1, stderr: expect.stringMatching(message) });
      expect(written).toBeUndefined();
    }
  });

  it("never writes through a link left beside its output: the file is made under a fresh name and renamed over", () => {
    const victim = join(dir, "victim");
    writeFileSync(victim, "root's file\n");
    run("PORT=8000\n", { CADENCE_WORKERS: "1" });
    const output = join(dir, "servers", "proxy-servers.cfg");
    rmSync(output);
    symlinkSync(victim, `${output}.partial`);
    symlinkSync(victim, output);
    const { status, written } = run("PORT=8000\n", { CADENCE_WORKERS: "1" });
    expect(status).toBe(0);
    expect(readFileSync(victim, "utf8")).toBe("root's file\n");
    expect(servers(written)).toEqual(["    server w1 127.0.0.1:8000 port 9000"]);
    expect(readdirSync(join(dir, "servers")).sort()).toEqual(["proxy-servers.cfg", "proxy-servers.cfg.partial"]);
  });

  it("is given an output in a directory of root's by the unit, never the proxy user's RuntimeDirectory", () => {
    const unit = readFileSync(UNIT, "utf8");
    const output = /SERVERS=(\S+)/.exec(unit)![1];
    const runtime = /^RuntimeDirectory=(\S+)$/m.exec(unit)![1];
    expect(output.startsWith(`/run/${runtime}/`)).toBe(false);
    expect(output.startsWith("/run/")).toBe(true);
  });
});
