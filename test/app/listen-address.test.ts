import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopedDatabase } from "../support/database.ts";
import { type RunningServer, startServer } from "../support/server.ts";

/** An IPv4 address of this machine that is not loopback, if it has one: where a caller from the network connects. */
const external = Object.values(networkInterfaces()).flat().find((address) => address?.family === "IPv4" && !address.internal)?.address;

/** Whether a TCP connection to `host`:`port` is accepted (false when refused: nothing listens there). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => (error.code === "ECONNREFUSED" ? resolve(false) : reject(error)));
  });
}

const portOf = (server: RunningServer) => Number(new URL(server.url).port);
/** The `host` of the server's listening line: where it listens, as Deno reports it. */
const hostOf = (server: RunningServer) => /"event":"listening".*?"host":"([^"]+)"/.exec(server.logs())?.[1];

// Each start as package.json runs it (the production start's HOST goes to `deno serve --host`), once
// with HOST unset and once with the value that opens every interface.
const starts = [
  { script: "start", env: {}, everyInterface: "0.0.0.0" },
  // IPv6's every-interface address: the script writes it in brackets, as deno serve --host requires.
  { script: "start:workers", env: { DENO_JOBS: "1" }, everyInterface: "::" },
] as const;

for (const { script, env, everyInterface } of starts) {
  describe(`npm run ${script} listens on loopback unless HOST says otherwise`, () => {
    const database = scopedDatabase();
    let byDefault: RunningServer;
    let open: RunningServer;

    beforeAll(async () => {
      const options = { startScript: true, script };
      [byDefault, open] = await Promise.all([
        startServer({ ...database.serverEnv, ...env }, undefined, options),
        startServer({ ...database.serverEnv, ...env, HOST: everyInterface }, undefined, options),
      ]);
    });
    afterAll(() => Promise.all([byDefault?.stop(), open?.stop()]));

    it(`names where it listens at start: 127.0.0.1 by default, ${everyInterface} with HOST=${everyInterface}`, () => {
      expect(hostOf(byDefault)).toBe("127.0.0.1");
      expect(hostOf(open)).toBe(everyInterface);
    });

    it.skipIf(!external)("by default, answers on loopback and refuses a connection to the machine's other addresses", async () => {
      expect(await accepts("127.0.0.1", portOf(byDefault))).toBe(true);
      expect(await accepts(external!, portOf(byDefault))).toBe(false);
    });

    it.skipIf(!external)(`with HOST=${everyInterface}, answers on the machine's other addresses too`, async () => {
      expect(await accepts(external!, portOf(open))).toBe(true);
    });

    it("stops at start naming HOST when it is a name, not an IP address (a name could resolve to any interface)", async () => {
      const started = startServer({ ...database.serverEnv, ...env, HOST: "localhost" }, undefined, { startScript: true, script });
      await expect(started).rejects.toThrow(/exited with 1:[\s\S]*HOST: must be an IP address to listen on/);
    });
  });
}
