import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const PRODUCTION = new URL("../../functions/production/", import.meta.url).pathname;
const UNITS = ["cadence-workers.service", "cadence-proxy.service"];

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

/** A unit's `key=value` lines under [Service]. */
const serviceOf = (unit: string) => readFileSync(`${PRODUCTION}${unit}`, "utf8").split("[Service]")[1].split("[Install]")[0];

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
      expect(service).toMatch(/^ExecReload=\/bin\/kill -(HUP|USR2) \$MAINPID$/m);
    }
  });

  it("bind the workers to loopback whatever their environment file says (an Environment= line would lose to it)", () => {
    expect(serviceOf("cadence-workers.service")).toMatch(/^ExecStart=\/usr\/bin\/env HOST=127\.0\.0\.1 /m);
  });
});
