import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BODY_DEADLINE_MS } from "../../functions/app/http/body.ts";
import { scopedDatabase } from "../support/database.ts";
import { startServer, type RunningServer } from "../support/server.ts";

/**
 * Speaks raw HTTP/1.1, so the test controls exactly when each byte is sent. Resolves as soon as a
 * whole response has arrived (the server answers before the client has finished sending).
 */
function rawRequest(url: string, head: string, send: (write: (chunk: string) => void) => Promise<void>) {
  const { hostname, port } = new URL(url);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no whole response within 30 s: ${JSON.stringify(received.slice(0, 200))}`));
    }, 30_000);
    socket.setEncoding("utf8");
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      received += chunk;
      const split = received.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(received.slice(0, split));
      if (split < 0 || !length || received.length < split + 4 + Number(length[1])) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]),
        body: received.slice(split + 4, split + 4 + Number(length[1])),
      });
    });
    socket.on("connect", () => {
      socket.write(head);
      send((chunk) => {
        if (!socket.destroyed) socket.write(chunk);
      }).catch(() => {});
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("POST /api/v2/license and POST /api/v2/automations/create/account against slow and oversized clients", () => {
  const database = scopedDatabase();
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: database.url, TRUST_PROXY: "true", SIGNING_SECRET: "slow-secret" });
  });
  afterAll(async () => {
    await server?.stop();
  });

  for (const path of ["/api/v2/license", "/api/v2/automations/create/account"]) {
    it(`cuts off a chunked body over 64 KiB with 413 on ${path}, without waiting for the rest`, async () => {
      const chunk = "x".repeat(8 * 1024);
      const response = await rawRequest(
        server.url,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Forwarded-For: 192.0.2.${path.length}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
        async (write) => {
          // 128 KiB announced by nobody: the server must stop reading after 64 KiB.
          for (let i = 0; i < 16; i++) write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
        },
      );
      expect(response.status).toBe(413);
      expect(JSON.parse(response.body)).toEqual({ message: "request body must not exceed 64 KiB" });
    });
  }

  for (const path of ["/api/v2/license", "/api/v2/automations/create/account"]) {
    // Concurrent: each waits out the real deadline on its own connection and address.
    it.concurrent(`answers 408 to a body trickled slower than the ${BODY_DEADLINE_MS / 1000} s deadline on ${path}`, async () => {
      const response = await rawRequest(
        server.url,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Forwarded-For: 192.0.2.${100 + path.length}\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n{`,
        async (write) => {
          for (let i = 0; i < 60; i++) {
            await sleep(500);
            write(" ");
          }
        },
      );
      expect(response.status).toBe(408);
      expect(JSON.parse(response.body)).toEqual({ message: "request body was not received in time" });
    });
  }

  for (const path of ["/api/v2/license", "/api/v2/automations/create/account"]) {
    it(`logs a client that closes its connection mid-body on ${path} at info, never as an error`, async () => {
      const { hostname, port } = new URL(server.url);
      const socket = connect(Number(port), hostname);
      await new Promise<void>((resolve) => socket.on("connect", resolve));
      socket.end(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Forwarded-For: 192.0.2.${150 + path.length}\r\nContent-Length: 100\r\n\r\n{"license`);
      socket.on("error", () => {});
      const line = new RegExp(`"level":"info","event":"request_abandoned","method":"POST","path":"${path}"`);
      await vi.waitFor(() => expect(server.logs()).toMatch(line), { timeout: 20_000, interval: 50 });
      expect(server.logs()).not.toMatch(/"level":"error"/);
    });
  }

  it.concurrent("keeps answering other clients while twenty slow clients hold their connections open", async () => {
    const slow = Array.from({ length: 20 }, (_, i) =>
      rawRequest(
        server.url,
        `POST /api/v2/license HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Forwarded-For: 192.0.2.${200 + (i % 50)}\r\nContent-Length: 500\r\n\r\n{`,
        async (write) => {
          for (let j = 0; j < 30; j++) {
            await sleep(500);
            write(" ");
          }
        },
      ),
    );
    let slowAnswered = 0;
    for (const client of slow) void client.then(() => slowAnswered++);
    const response = await fetch(`${server.url}/api/v2/frequencies`);
    expect(response.status).toBe(200);
    // Answered first: before any slow client got its 408, so never queued behind them.
    expect(slowAnswered).toBe(0);
    expect((await Promise.all(slow)).map((answer) => answer.status)).toEqual(Array(20).fill(408));
  });
});
