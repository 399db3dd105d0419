import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import { join } from "node:path";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { scopedDatabase } from "../support/database.ts";
import { startServer, type RunningServer } from "../support/server.ts";

const root = new URL("../../", import.meta.url).pathname;
const deno = `${root}node_modules/.bin/deno`;
const SECRET = "check-signing-secret";

/** Runs the check command as `npm run check` does; resolves to its exit code and output. */
function runCheck(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(deno, ["run", "--allow-net", "--allow-read", "functions/cli/check.ts", ...args], { cwd: root, env: childEnv() }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

const linesOf = (stdout: string) => stdout.trimEnd().split("\n");

/** What `npm run check` says after a refused certificate's reason (functions/cli/deployment-checks.ts). */
const CERTIFICATE_ADVICE: Record<string, string> = {
  "Other(OtherError(CaUsedAsEndEntity))": "the server's certificate is a CA certificate (basicConstraints CA:TRUE) served as its own, which TLS clients refuse: make a leaf (npm run -s certificate) or get a real one (certbot)",
  UnknownIssuer: "the server's certificate is not signed by an authority this machine trusts: for a self-signed one, pass it with --ca <file>; for a real one, serve its whole chain (certbot's fullchain.pem)",
};

/** A server on the real entry for one test: each run of the check spends its own IP's minute of the limits. */
async function withServer<T>(env: Record<string, string>, use: (server: RunningServer) => Promise<T>): Promise<T> {
  const server = await startServer(env);
  try {
    return await use(server);
  } finally {
    await server.stop();
  }
}

/**
 * A deployment in front of `upstream`: `answer` answers the requests it wants to (and says so), and
 * everything else is forwarded as it came.
 */
async function deploymentInFront(
  upstream: string,
  answer: (request: IncomingMessage, response: ServerResponse) => boolean,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (request, response) => {
    if (answer(request, response)) return;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string" && name !== "host") headers.set(name, value);
    const forwarded = await fetch(upstream + request.url, {
      method: request.method,
      headers,
      body: ["GET", "HEAD"].includes(request.method ?? "GET") ? undefined : Buffer.concat(chunks),
    });
    response.writeHead(forwarded.status, Object.fromEntries(forwarded.headers)).end(Buffer.from(await forwarded.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A deployment broken in one place: the frequencies answer eight instead of nine. */
const brokenFrequencies = (upstream: string) =>
  deploymentInFront(upstream, (request, response) => {
    if (request.url !== "/api/v2/frequencies") return false;
    const eight = Array.from({ length: 8 }, (_, i) => ({ id: i + 1, name: `f${i + 1}`, value: 100 * (i + 1) }));
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(eight));
    return true;
  });

/**
 * A deployment whose fixed window of the per-IP limit ends in the middle of the limit probe: the
 * probe's reads (a schedule read claiming a client in X-Real-IP) are answered as that window's end
 * answers them (unknown key, RateLimit-Remaining 9 to 6, then 9 to 3 in the next window, no 429).
 */
function windowEndsMidProbe(upstream: string) {
  const remaining = [9, 8, 7, 6, 9, 8, 7, 6, 5, 4, 3];
  let reads = 0;
  return deploymentInFront(upstream, (request, response) => {
    if (!/^\/api\/v2\/licenses\/[^/]+\/schedule$/.test(request.url ?? "") || !request.headers["x-real-ip"]) return false;
    const left = remaining[Math.min(reads++, remaining.length - 1)];
    response.writeHead(404, { "content-type": "application/json", "ratelimit-limit": "10", "ratelimit-remaining": String(left), "ratelimit-reset": "30" });
    response.end(JSON.stringify({ message: "unknown_license" }));
    return true;
  });
}

describe("npm run check (functions/cli/check.ts) against a running deployment", () => {
  const database = scopedDatabase();

  it("passes every check against the real entry, the limit probe and a signed onboarding included, and exits 0", async () => {
    await withServer({ ...database.serverEnv, SIGNING_SECRET: SECRET }, async (server) => {
      const { code, stdout, stderr } = await runCheck(["--url", `${server.url}/`, "--limits", "--secret", SECRET, "--email", "check-cli@example.com"]);
      const lines = linesOf(stdout);
      expect(lines.at(-1)).toBe("20 passed, 0 failed");
      expect(lines.slice(0, -1).filter((line) => !line.startsWith("PASS "))).toEqual([]);
      expect(stdout).toContain("PASS GET /api/v2/frequencies: 9 frequencies, ids 1 to 9");
      expect(stdout).toMatch(/PASS GET \/api\/v2\/licenses\/\{key\}\/schedule ×11.*limits hold/);
      expect(stdout).toContain("(signed, onboards check-cli@example.com)");
      expect(stderr).toContain("spends this IP's minute of that limit");
      expect(code).toBe(0);
      const [account] = await database.db.query("select 1 from public.accounts where email = 'check-cli@example.com'");
      expect(account).toBeDefined();
    });
  });

  it("passes the limit probe from a registered venue address, naming the venue as why no read got 429", async () => {
    await database.db.query(
      "insert into public.venue_addresses (account_id, network, kiosks) select id, '127.0.0.1', 2 from public.accounts where email = 'demo@example.com'",
    );
    try {
      await withServer(database.serverEnv, async (server) => {
        const { code, stdout } = await runCheck(["--url", `${server.url}/`, "--limits"]);
        expect(stdout).toMatch(
          /PASS GET \/api\/v2\/licenses\/\{key\}\/schedule ×11.*: limits hold: the 11 reads counted in one bucket of 20 a minute, above the interface's 10: this address is a registered venue/,
        );
        expect(code).toBe(0);
      });
    } finally {
      await database.db.query("delete from public.venue_addresses where network = '127.0.0.1'");
    }
  });

  it("fails the limit probe of a deployment that trusts a forged X-Forwarded-For, names CLIENT_IP_HEADER, and exits 1", async () => {
    await withServer({ ...database.serverEnv, TRUST_PROXY: "true" }, async (server) => {
      const { code, stdout } = await runCheck(["--url", server.url, "--limits"]);
      const lines = linesOf(stdout);
      expect(lines.at(-1)).toBe("18 passed, 1 failed");
      const failed = lines.filter((line) => line.startsWith("FAIL "));
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatch(/^FAIL GET \/api\/v2\/licenses\/\{key\}\/schedule ×11, each with a forged client IP .*limits do not hold.*CLIENT_IP_HEADER/);
      expect(code).toBe(1);
    });
  });

  // The check runs from 127.0.0.1; the proxy here is 127.0.0.2, so the check is a stranger reaching
  // the port directly, as the caller of issue 49 was.
  it("passes the limit probe from a peer that is not a trusted proxy: its forged X-Real-IP is not believed", async () => {
    await withServer({ ...database.serverEnv, CLIENT_IP_HEADER: "x-real-ip", TRUSTED_PROXIES: "127.0.0.2" }, async (server) => {
      const { code, stdout } = await runCheck(["--url", server.url, "--limits"]);
      // Read 11 gets 429, unless the limit's window of a minute ended between the reads (below).
      expect(stdout).toMatch(/PASS GET \/api\/v2\/licenses\/\{key\}\/schedule ×11.*limits hold: (read \d+ of 11 got 429, forged client IPs opened no bucket|the 11 reads counted in one bucket of 10 a minute, whose window ended between them)/);
      expect(code).toBe(0);
    });
  });

  it("passes the limit probe when the limit's window ends between its reads: one bucket, counted again from the window's start, no 429", async () => {
    await withServer(database.serverEnv, async (server) => {
      const deployment = await windowEndsMidProbe(server.url);
      try {
        const { stdout } = await runCheck(["--url", deployment.url, "--limits"]);
        expect(stdout).toMatch(/PASS GET \/api\/v2\/licenses\/\{key\}\/schedule ×11.*: limits hold: the 11 reads counted in one bucket of 10 a minute, whose window ended between them, so none got 429/);
      } finally {
        await deployment.close();
      }
    });
  });

  it("fails the limit probe of a start whose TRUSTED_PROXIES holds every address, naming TRUSTED_PROXIES, and exits 1", async () => {
    await withServer({ ...database.serverEnv, CLIENT_IP_HEADER: "x-real-ip", TRUSTED_PROXIES: "127.0.0.2,0.0.0.0/0" }, async (server) => {
      const { code, stdout } = await runCheck(["--url", server.url, "--limits"]);
      expect(linesOf(stdout).filter((line) => line.startsWith("FAIL "))).toEqual([
        expect.stringMatching(/^FAIL GET \/api\/v2\/licenses\/\{key\}\/schedule ×11, each with a forged client IP .*limits do not hold.*TRUSTED_PROXIES/),
      ]);
      expect(code).toBe(1);
    });
  });

  it("says which check fails when one answer is wrong, passes the others, and exits 1", async () => {
    await withServer(database.serverEnv, async (server) => {
      const broken = await brokenFrequencies(server.url);
      try {
        const { code, stdout } = await runCheck(["--url", broken.url]);
        const lines = linesOf(stdout);
        expect(lines.filter((line) => line.startsWith("FAIL "))).toEqual([
          "FAIL GET /api/v2/frequencies: expected exactly the ids 1 to 9, got [1,2,3,4,5,6,7,8]",
        ]);
        expect(lines.at(-1)).toBe("17 passed, 1 failed");
        expect(code).toBe(1);
      } finally {
        await broken.close();
      }
    });
  });

  it("fails every check of a deployment that does not answer, and exits 1, saying why", async () => {
    const { code, stdout } = await runCheck(["--url", "http://127.0.0.1:9"]);
    expect(linesOf(stdout).at(-1)).toBe("0 passed, 18 failed");
    // The cause fetch hides behind `fetch failed`.
    expect(stdout).toMatch(/FAIL GET \/api\/v2\/categories: no answer: .*port 9/);
    expect(code).toBe(1);
  });

  it("over TLS, names why the certificate was refused and what to do, where fetch says only `fetch failed`", async () => {
    // Under /tmp: Deno reads a file under /dev (the tests' /dev/shm) only with --allow-all.
    const dir = mkdtempSync("/tmp/cadence-check-tls-");
    try {
      // What `openssl req -x509` makes unless told otherwise: a CA certificate, served as the server's own.
      const ca = { key: join(dir, "ca-key.pem"), cert: join(dir, "ca.pem") };
      execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", ca.key, "-out", ca.cert, "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"], { stdio: "ignore" });
      // The docs' command: a leaf.
      execFileSync("sh", [`${root}functions/production/local-certificate.sh`, "localhost", dir], { stdio: "ignore" });
      const leaf = { key: join(dir, "tls.pem"), cert: join(dir, "tls-certificate.pem") };
      for (const [certificate, trusted, reason, advice] of [
        [ca, true, "Other(OtherError(CaUsedAsEndEntity))", "is a CA certificate"],
        [leaf, false, "UnknownIssuer", "pass it with --ca <file>"],
      ] as const) {
        const server = createHttpsServer({ key: readFileSync(certificate.key), cert: readFileSync(certificate.cert) }, (_, response) => response.end("{}"));
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        try {
          const url = `https://localhost:${(server.address() as AddressInfo).port}`;
          const { stdout } = await runCheck(["--url", url, ...(trusted ? ["--ca", certificate.cert] : [])]);
          expect(linesOf(stdout)[0]).toBe(`FAIL GET /api/v2/categories: no answer: TLS: certificate refused (${reason}): ${CERTIFICATE_ADVICE[reason]}`);
          expect(linesOf(stdout)[0]).toContain(advice);
        } finally {
          await new Promise((resolve) => server.close(resolve));
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("onboards only with both --secret and --email: one without the other is refused before any request", async () => {
    for (const args of [["--secret", SECRET], ["--email", "half@example.com"]]) {
      const { code, stdout, stderr } = await runCheck(["--url", "http://127.0.0.1:9", ...args]);
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toContain("--secret and --email go together");
    }
  });
});
