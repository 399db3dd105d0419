import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { standardWebhook } from "../../functions/app/signatures/standard-webhooks.ts";

/** One event as a receiver reads it from a message. */
export interface ReceivedEvent {
  id: string;
  type: string;
  sequence: number;
  license_key?: string;
  account_id?: string;
  previous_account_id?: string;
  occurred_at: string;
  data: Record<string, unknown>;
}

/** One request as it came, with whether the `standardwebhooks` package verified it, and the answer given. */
export interface ReceivedMessage {
  webhookId: string;
  signature: string;
  verified: boolean;
  events: ReceivedEvent[];
  status: number;
  /** When its body had arrived, epoch ms (the real clock). */
  receivedAt: number;
}

/**
 * An automation platform's receiver on 127.0.0.1, as an integrator writes one: every request
 * verified with the `standardwebhooks` package against `secret`, then answered 200, or `answer`'s
 * status (a failure) when given. Records each request and the most it had in flight at once.
 * `clock` (epoch ms) replaces the real clock for the timestamp check, for a sender on a fast clock;
 * the signature is still checked by the package (through `standardWebhook`, which wraps it).
 */
export async function startEventReceiver(
  options: { secret: string; answer?: (message: ReceivedMessage) => number | "hang"; clock?: () => number },
) {
  const messages: ReceivedMessage[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  let webhook = new Webhook(options.secret);
  const server = createServer((req, res) => {
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const headers = {
        "webhook-id": String(req.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(req.headers["webhook-signature"] ?? ""),
      };
      let verified = true;
      if (options.clock) {
        verified = standardWebhook(options.secret).verify(raw, new Headers(headers), options.clock()).valid;
      } else {
        try {
          webhook.verify(raw, headers);
        } catch {
          verified = false;
        }
      }
      const message: ReceivedMessage = {
        webhookId: headers["webhook-id"],
        signature: headers["webhook-signature"],
        verified,
        events: verified ? (JSON.parse(raw) as { events: ReceivedEvent[] }).events : [],
        status: 200,
        receivedAt: Date.now(),
      };
      const answer = verified ? (options.answer?.(message) ?? 200) : 401;
      messages.push(message);
      if (answer === "hang") return;
      message.status = answer;
      inFlight -= 1;
      res.statusCode = answer;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/cadence/events`,
    messages,
    /** The events of the messages it accepted, in the order they arrived. */
    accepted: () => messages.filter((message) => message.status >= 200 && message.status < 300).flatMap((message) => message.events),
    mostInFlight: () => mostInFlight,
    /** Verifies from now on against another secret, as a receiver that moved to a rotated one. */
    useSecret(secret: string) {
      webhook = new Webhook(secret);
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
