import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const PRODUCTION = new URL("../../functions/production/", import.meta.url).pathname;
const UNITS = ["cadence-workers.service", "cadence-proxy.service"];
/** The most `systemd-analyze security` may score a unit (issue 59): "OK" goes up to 4.9, "MEDIUM" from 5. */
const MOST_EXPOSURE = 3.0;

/** `systemd-analyze verify` on `unit`: its exit status and everything it printed. */
function verify(unit: string): { status: number; printed: string } {
  try {
    const printed = execFileSync("systemd-analyze", ["verify", `${PRODUCTION}${unit}`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return { status: 0, printed };
  } catch (error) {
    const failed = error as { status: number; stdout: string; stderr: string };
    return { status: failed.status, printed: failed.stdout + failed.stderr };
  }
}

/**
 * `systemd-analyze security` on the unit file itself, as systemd would run it (`--offline`: no
 * systemd needed): the overall exposure it prints, 0.0 (locked down) to 10.0. Throws when the
 * program is missing, so a machine without it fails here instead of passing unchecked; .ci/run
 * installs it (Debian's systemd).
 */
function exposureOf(unit: string): number {
  let printed: string;
  try {
    printed = execFileSync("systemd-analyze", ["security", "--offline=true", `${PRODUCTION}${unit}`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const failed = error as NodeJS.ErrnoException & { stderr?: string };
    if (failed.code === "ENOENT") throw new Error("systemd-analyze is missing: install Debian's systemd package (.ci/run does)");
    throw new Error(`systemd-analyze security ${unit} failed: ${failed.stderr ?? failed.message}`);
  }
  const overall = /Overall exposure level for \S+: (\d+\.\d)/.exec(printed);
  if (!overall) throw new Error(`systemd-analyze security ${unit} printed no overall exposure:\n${printed}`);
  return Number(overall[1]);
}

/** A unit's `key=value` lines under [Service]. */
const serviceOf = (unit: string) => readFileSync(`${PRODUCTION}${unit}`, "utf8").split("[Service]")[1].split("[Install]")[0];

/** A unit's [Service] settings, each key with every value it was given, in order; comments left out. */
function settingsOf(unit: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  for (const line of serviceOf(unit).split("\n")) {
    const match = /^(\w+)=(.*)$/.exec(line.trim());
    if (match) settings.set(match[1], [...(settings.get(match[1]) ?? []), match[2]]);
  }
  return settings;
}

/** Every socket family a unit may open, from its RestrictAddressFamilies= lines. */
const familiesOf = (unit: string) => (settingsOf(unit).get("RestrictAddressFamilies") ?? []).flatMap((line) => line.split(/\s+/));

describe("the systemd units (functions/production/*.service)", () => {
  it("pass systemd-analyze verify without a word", () => {
    for (const unit of UNITS) expect({ unit, ...verify(unit) }).toEqual({ unit, status: 0, printed: "" });
  });

  it("each read an environment file, restart on failure, set a descriptor limit and reload without a stop", () => {
    for (const unit of UNITS) {
      const service = serviceOf(unit);
      expect(service).toMatch(/^EnvironmentFile=\/etc\/cadence\/\w+\.env$/m);
      expect(service).toMatch(/^Restart=(on-failure|always)$/m);
      expect(service).toMatch(/^LimitNOFILE=\d+$/m);
    }
    // The workers' reload waits for the rolling restart's end, failing when the release could not start (reload-workers.sh).
    expect(serviceOf("cadence-workers.service")).toMatch(/^ExecReload=\/bin\/sh \/opt\/cadence\/current\/functions\/production\/reload-workers\.sh \$MAINPID$/m);
    expect(serviceOf("cadence-proxy.service")).toMatch(/^ExecReload=\/bin\/kill -USR2 \$MAINPID$/m);
  });

  it("bind the workers to loopback whatever their environment file says (an Environment= line would lose to it)", () => {
    expect(serviceOf("cadence-workers.service")).toMatch(/^ExecStart=\/usr\/bin\/env HOST=127\.0\.0\.1 /m);
  });

  it(`score ${MOST_EXPOSURE.toFixed(1)} or less in systemd-analyze security, the score their own comments and the README give`, () => {
    const readme = readFileSync(`${PRODUCTION}README.md`, "utf8");
    for (const unit of UNITS) {
      const exposure = exposureOf(unit);
      expect(exposure, unit).toBeLessThanOrEqual(MOST_EXPOSURE);
      const stated = exposure.toFixed(1);
      expect(readFileSync(`${PRODUCTION}${unit}`, "utf8"), unit).toContain(`scores it ${stated} `);
      expect(readme, unit).toMatch(new RegExp(`\`${unit.replace(".service", "")}\`\\s+${stated.replace(".", "\\.")} `));
    }
  });

  it("leave the workers what Deno needs: writable and executable memory for V8's compiler (with the reason), its cache, the network anywhere, and no privilege", () => {
    const workers = settingsOf("cadence-workers.service");
    expect(workers.has("MemoryDenyWriteExecute")).toBe(false);
    expect(serviceOf("cadence-workers.service")).toMatch(/^# Not MemoryDenyWriteExecute=: V8 .*compiles JavaScript/m);
    expect(workers.get("ProtectSystem")).toEqual(["strict"]);
    expect(workers.get("CacheDirectory")).toEqual(["cadence"]);
    expect(workers.get("Environment")).toContain("DENO_DIR=/var/cache/cadence");
    // Postgres, Redis, Upstash and Resend over IPv4 or IPv6 wherever they are, local sockets too.
    expect(familiesOf("cadence-workers.service").sort()).toEqual(["AF_INET", "AF_INET6", "AF_UNIX"]);
    for (const key of ["IPAddressAllow", "IPAddressDeny", "PrivateNetwork"]) expect(workers.has(key), key).toBe(false);
    // V8's memory protection keys stay allowed: it write-protects its compiled code with them.
    expect(workers.get("SystemCallFilter")![0].split(/\s+/)).toEqual(expect.arrayContaining(["@system-service", "pkey_alloc", "pkey_mprotect"]));
    expect(workers.get("CapabilityBoundingSet")).toEqual([""]);
    expect(workers.has("AmbientCapabilities")).toBe(false);
  });

  it("leave the proxy port 443 as the haproxy user (its one capability, in the host's user namespace), clients from anywhere, and no regex in haproxy.cfg while writable code is refused", () => {
    const proxy = settingsOf("cadence-proxy.service");
    expect(proxy.get("User")).toEqual(["haproxy"]);
    expect(proxy.get("AmbientCapabilities")).toEqual(["CAP_NET_BIND_SERVICE"]);
    expect(proxy.get("CapabilityBoundingSet")).toEqual(["CAP_NET_BIND_SERVICE"]);
    // In a user namespace of its own the capability would not reach the host's network.
    expect(proxy.has("PrivateUsers")).toBe(false);
    expect(familiesOf("cadence-proxy.service").sort()).toEqual(["AF_INET", "AF_INET6", "AF_UNIX"]);
    for (const key of ["IPAddressAllow", "IPAddressDeny", "PrivateNetwork"]) expect(proxy.has(key), key).toBe(false);
    // Its pid file, the one thing it writes, in the directory systemd makes for it.
    expect(proxy.get("RuntimeDirectory")).toEqual(["cadence-proxy"]);
    expect(proxy.get("ExecStart")![0]).toContain(" -p /run/cadence-proxy/haproxy.pid");
    // PCRE2's JIT needs writable and executable memory: HAProxy then refuses any regex it is given.
    if (proxy.get("MemoryDenyWriteExecute")?.[0] === "true") {
      const config = readFileSync(`${PRODUCTION}haproxy.cfg`, "utf8").split("\n").filter((line) => !line.trim().startsWith("#"));
      const regexes = config.filter((line) => /_regm?\b|-m\s+reg\b|\bregsub\(|\breplace-(header|value|uri|path|pathq)\b/.test(line));
      expect(regexes, "haproxy.cfg uses a regex: drop MemoryDenyWriteExecute=true from cadence-proxy.service").toEqual([]);
    }
  });

  it("refuse a filtered system call with EPERM, which the program can handle, not by killing it", () => {
    for (const unit of UNITS) expect(settingsOf(unit).get("SystemCallErrorNumber"), unit).toEqual(["EPERM"]);
  });
});
