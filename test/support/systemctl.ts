/**
 * `systemctl` for a machine without systemd as PID 1 (these tests' containers): it plays what the
 * docs ask of systemd from the unit files themselves, so a test runs the docs' commands as written.
 * The test puts a `systemctl` on PATH that runs this (Deno), with `SYSTEMCTL_UNITS` (the directory
 * the docs copy units into), `SYSTEMCTL_RUN` (where it keeps each started unit's pid and log) and
 * `SYSTEMCTL_PATHS` (JSON: the machine's paths the test moved, `/etc/cadence` to a directory of its
 * own..., applied to every line of a unit, longest first).
 *
 * - `daemon-reload`: nothing to do.
 * - `enable --now <unit>...`: for each, as systemd would start it: `EnvironmentFile=` and
 *   `Environment=` (the file's values winning, as systemd's do), `WorkingDirectory=`, `LimitNOFILE=`
 *   (`ulimit -n`, or the hard limit where that is lower and cannot be raised), each `ExecStartPre=` in turn, then `ExecStart=` in a process group of its own, its
 *   output to `<unit>.log`; `$VAR` and `${VAR}` expanded from that environment. `User=`, `Group=`,
 *   the sandboxing and `AmbientCapabilities=` are not applied: the test's own user runs it, so a
 *   command's `+` (full privileges) changes nothing and is dropped.
 * - `RuntimeDirectory=`: made under `SYSTEMCTL_RUN`, and named in `RUNTIME_DIRECTORY`, as systemd does.
 * - `reload <unit>`: each `ExecReload=`, with `$MAINPID` the started process; failing as systemctl
 *   does (status 1) when one fails.
 * - `is-active [--quiet] <unit>`: status 0 when the unit it started still runs, 3 otherwise.
 * - `disable --now <unit>` of a unit it did not start (Debian's haproxy): nothing runs to stop.
 * - `stop <unit>...`: SIGTERM to the unit's process group, waiting until it is gone.
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";

const units = process.env.SYSTEMCTL_UNITS!;
const run = process.env.SYSTEMCTL_RUN!;
const moved = Object.entries(JSON.parse(process.env.SYSTEMCTL_PATHS ?? "{}") as Record<string, string>).sort(([a], [b]) => b.length - a.length);
/** A unit's line with the moved paths put where the test put them. */
const relocated = (line: string) => moved.reduce((text, [from, to]) => text.replaceAll(from, to), line);
const [command, ...rest] = process.argv.slice(2);
const names = rest.filter((argument) => !argument.startsWith("--")).map((name) => (name.endsWith(".service") ? name : `${name}.service`));

/** A unit's [Service] keys, each with every value it was given, in order. */
function serviceOf(name: string): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  let inService = false;
  for (const raw of readFileSync(join(units, name), "utf8").split("\n")) {
    const line = relocated(raw.trim());
    if (line.startsWith("[")) inService = line === "[Service]";
    if (!inService || line.startsWith("#") || !line.includes("=")) continue;
    const key = line.slice(0, line.indexOf("="));
    keys.set(key, [...(keys.get(key) ?? []), line.slice(key.length + 1)]);
  }
  return keys;
}

/** `A=1 "B=two words"` as systemd's Environment= reads it. */
function assignments(text: string): Array<[string, string]> {
  return [...text.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2]).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]);
}

function environmentOf(service: Map<string, string[]>): Record<string, string> {
  const environment: Record<string, string> = { ...process.env } as Record<string, string>;
  const runtime = service.get("RuntimeDirectory")?.[0];
  if (runtime) {
    environment.RUNTIME_DIRECTORY = join(run, runtime);
    mkdirSync(environment.RUNTIME_DIRECTORY, { recursive: true });
  }
  for (const line of service.get("Environment") ?? []) for (const [key, value] of assignments(line)) environment[key] = value;
  for (const file of service.get("EnvironmentFile") ?? []) {
    const optional = file.startsWith("-");
    const path = optional ? file.slice(1) : file;
    if (!existsSync(path)) {
      if (optional) continue;
      throw new Error(`${path}: no such environment file`);
    }
    for (const line of readFileSync(path, "utf8").split("\n")) {
      const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
      if (match) environment[match[1]] = match[2].replace(/^"(.*)"$/, "$1");
    }
  }
  return environment;
}

/** A command line with `$VAR` and `${VAR}` taken from `environment`, as systemd expands them. */
const expanded = (line: string, environment: Record<string, string>) =>
  line.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced: string, bare: string) => environment[braced ?? bare] ?? "");

/** Runs `line` through sh in the unit's directory, under its descriptor limit; without its `+`, which the test's user has no use for. */
function shell(line: string, service: Map<string, string[]>, environment: Record<string, string>) {
  const limit = service.get("LimitNOFILE")?.[0];
  const limits = limit ? `{ ulimit -n ${limit} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; } && ` : "";
  return [`${limits}exec ${line.replace(/^\+/, "")}`, { cwd: service.get("WorkingDirectory")?.[0], env: environment }] as const;
}

const pidFile = (name: string) => join(run, `${name}.pid`);

function start(name: string) {
  const service = serviceOf(name);
  const environment = environmentOf(service);
  for (const pre of service.get("ExecStartPre") ?? []) {
    const [line, options] = shell(expanded(pre, environment), service, environment);
    const result = spawnSync("sh", ["-c", line], { ...options, stdio: "inherit" });
    if (result.status !== 0) throw new Error(`${name}: ExecStartPre ${pre} exited with ${result.status}`);
  }
  const log = openSync(join(run, `${name}.log`), "a");
  const [line, options] = shell(expanded(service.get("ExecStart")![0], environment), service, environment);
  const child = spawn("sh", ["-c", line], { ...options, detached: true, stdio: ["ignore", log, log] });
  closeSync(log);
  writeFileSync(pidFile(name), String(child.pid));
  child.unref();
}

function reload(name: string) {
  const service = serviceOf(name);
  const environment = { ...environmentOf(service), MAINPID: readFileSync(pidFile(name), "utf8").trim() };
  for (const step of service.get("ExecReload") ?? []) {
    const [line, options] = shell(expanded(step, environment), service, environment);
    const result = spawnSync("sh", ["-c", line], { ...options, stdio: "inherit" });
    if (result.status !== 0) {
      console.error(`Job for ${name} failed: ExecReload ${step} exited with ${result.status}`);
      process.exit(1);
    }
  }
}

/** Whether the unit this started still runs. */
function active(name: string): boolean {
  if (!existsSync(pidFile(name))) return false;
  try {
    process.kill(Number(readFileSync(pidFile(name), "utf8")), 0);
    return true;
  } catch {
    return false;
  }
}

async function stop(name: string) {
  if (!existsSync(pidFile(name))) return;
  const pid = Number(readFileSync(pidFile(name), "utf8"));
  try {
    process.kill(-pid, "SIGTERM");
    for (;;) {
      process.kill(pid, 0);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch {
    // Gone.
  }
}

switch (command) {
  case "daemon-reload":
    break;
  case "enable":
    if (rest.includes("--now")) for (const name of names) start(name);
    break;
  case "disable":
    if (rest.includes("--now")) for (const name of names) await stop(name);
    break;
  case "reload":
    for (const name of names) reload(name);
    break;
  case "stop":
    for (const name of names) await stop(name);
    break;
  case "is-active":
    process.exit(names.every(active) ? 0 : 3);
  default:
    console.error(`systemctl (test/support/systemctl.ts): ${command} is not played here`);
    process.exit(1);
}
