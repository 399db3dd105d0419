/**
 * A flood that holds its connections to the proxy for a while and reopens each one as soon as the
 * proxy closes it (or refuses it), run as a process of its own (Deno) so that its work does not
 * share an event loop with the kiosk reads the test measures.
 *
 * Argument: JSON `{ port, addresses, perAddress, seconds, kind }`, and for a `trickled-body` flood
 * `ca` and `path`. Each address keeps `perAddress` connections to 127.0.0.1:`port` for `seconds`
 * (trickled bodies: and until the proxy has answered one):
 * - `idle`: a TCP connection that sends nothing;
 * - `trickled-body`: a TLS connection that sends a POST head announcing a 1 KiB body, then the body
 *   one byte every 3 s.
 * At the end it closes them all and prints one JSON line: attempts, `refused` (unanswered, and
 * closed within 5 s of opening or before its TLS handshake completed: the per-client caps), `closedAfterMs` (the shortest and longest a held
 * connection lasted before the proxy closed it), `mostHeld` (the most open for 5 s or longer
 * at once, sampled each second) and `answers` (the status line each trickled request got, or
 * "none").
 *
 * @example
 * deno run --allow-net test/support/reopening-flood.ts '{"port":8443,"addresses":["127.0.1.1"],"perAddress":100,"seconds":60,"kind":"idle"}'
 */
import { connect, type Socket } from "node:net";
import process from "node:process";
import { connect as connectTls } from "node:tls";

interface Flood {
  port: number;
  addresses: string[];
  perAddress: number;
  seconds: number;
  kind: "idle" | "trickled-body";
  ca?: string;
  path?: string;
}

const flood: Flood = JSON.parse(process.argv[2]);
/**
 * An idle connection closed sooner than this after it opened was refused, not held: the proxy holds
 * one until its `timeout client` (10 s, functions/production/haproxy.cfg) and closes a refused one
 * at once, which a busy machine stretches (1.4 s beside two CPU-bound processes), so half that
 * timeout, from the proxy's settings rather than this machine's speed. A TLS one was refused when
 * its handshake never completed (the proxy rejects before TLS).
 */
const REFUSED_WITHIN_MS = 5_000;
const TRICKLE_EVERY_MS = 3_000;
const BODY_BYTES = 1_024;

/** Each open connection, with when it opened. */
const open = new Map<Socket, number>();
const tally = { attempts: 0, refused: 0, closedAfterMs: { shortest: Infinity, longest: 0 }, mostHeld: 0, answers: {} as Record<string, number> };
const endAt = Date.now() + flood.seconds * 1_000;
let ending = false;
/**
 * Its time is up and, with trickled bodies, the proxy has answered a held request: the answers are
 * what the test judges, and a busy machine's handshakes outlasted what 15 s left after the proxy's
 * 10 s (none was answered beside two CPU-bound processes).
 */
const done = () => Date.now() >= endAt && (flood.kind === "idle" || Object.keys(tally.answers).length > 0);

/** Opens one connection from `address` and, once the proxy closes it, the next. */
function keep(address: string) {
  if (ending || done()) return;
  tally.attempts++;
  const openedAt = Date.now();
  const tcp = connect({ port: flood.port, host: "127.0.0.1", localAddress: address });
  const socket = flood.kind === "idle" ? tcp : connectTls({ socket: tcp, ca: flood.ca, servername: "localhost" });
  let answer = "";
  let secured = false;
  let trickle: ReturnType<typeof setInterval> | undefined;
  tcp.on("error", () => {});
  socket.on("error", () => {});
  tcp.on("connect", () => (ending ? tcp.destroy() : open.set(tcp, openedAt)));
  if (flood.kind === "trickled-body") {
    socket.on("secureConnect", () => (secured = true));
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    // Written now, so it goes first: a TLS socket sends what it holds once the handshake is done.
    socket.write(`POST ${flood.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${BODY_BYTES}\r\n\r\n`);
    trickle = setInterval(() => socket.writable && socket.write("x"), TRICKLE_EVERY_MS);
  }
  tcp.on("close", () => {
    clearInterval(trickle);
    const wasOpen = open.delete(tcp);
    if (ending) return;
    const lasted = Date.now() - openedAt;
    const refused = flood.kind === "idle" ? lasted < REFUSED_WITHIN_MS : !secured;
    if (!wasOpen || (refused && answer === "")) tally.refused++;
    else {
      tally.closedAfterMs.shortest = Math.min(tally.closedAfterMs.shortest, lasted);
      tally.closedAfterMs.longest = Math.max(tally.closedAfterMs.longest, lasted);
      if (flood.kind === "trickled-body") {
        const status = answer.slice(0, 12) || "none";
        tally.answers[status] = (tally.answers[status] ?? 0) + 1;
      }
    }
    keep(address);
  });
}

for (let i = 0; i < flood.perAddress; i++) for (const address of flood.addresses) keep(address);
// Refused connections are open for a moment too: only those open REFUSED_WITHIN_MS or longer were held.
const sample = setInterval(() => {
  const now = Date.now();
  tally.mostHeld = Math.max(tally.mostHeld, [...open.values()].filter((openedAt) => now - openedAt >= REFUSED_WITHIN_MS).length);
}, 1_000);
while (!done()) await new Promise((resolve) => setTimeout(resolve, 100));
ending = true;
clearInterval(sample);
for (const socket of open.keys()) socket.destroy();
console.log(JSON.stringify(tally));
