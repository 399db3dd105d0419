import { type ChildProcess, spawn } from "node:child_process";
import postgres from "postgres";
import { type ReceivedMessage, startEventReceiver } from "../support/event-receiver.ts";

// Issue 61, item 4: events proven as a receiver sees them. Staff edits and lifecycle changes run
// against a real database while a delivery worker (test/events/delivery-worker.ts, the app's
// deliverEvents under Deno) is killed with SIGKILL every `killEveryMs`, and the receiver, which
// verifies every request with the `standardwebhooks` package, fails half of them at random. Then
// the worker drains what is left, and the verdict compares what arrived with what was recorded.
// The test suite runs a short version (test/events/delivery-proof.test.ts); `npm run events:proof`
// the issue's five minutes.

/** What the proof saw; a run holds when `missing`, `underSeveralIds`, `outOfOrder` and `unverified` are all 0. */
export interface ProofVerdict {
  events: number;
  messages: number;
  refused: number;
  kills: number;
  /** Events recorded but never accepted. */
  missing: number;
  /** Events accepted under more than one webhook-id. */
  underSeveralIds: number;
  /** Events that arrived, for the first time, after a later one of their key (or account). */
  outOfOrder: number;
  /** Requests the package did not verify. */
  unverified: number;
  /** Accepted again under the same webhook-id: at-least-once's duplicates, allowed. */
  duplicates: number;
}

export interface ProofOptions {
  /** A migrated database (superuser URL). */
  url: string;
  /** The Deno binary and the project's root, to run the worker. */
  deno: string;
  root: string;
  seconds: number;
  killEveryMs: number;
  keys: number;
  seed: number;
  /** The longest the drain may take once the changes stop. */
  drainMs: number;
}

/** The worker's clock runs this much faster than the real one: a 5 s backoff takes 0.25 s. */
const CLOCK_RATE = 20;

/** A small seeded generator (mulberry32), so a failing run can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function proveDelivery(options: ProofOptions): Promise<ProofVerdict> {
  const sql = postgres(options.url, { max: 6, onnotice: () => {} });
  const random = seeded(options.seed);
  const epoch = Date.now();
  const clock = () => epoch + (Date.now() - epoch) * CLOCK_RATE;
  const [{ secret }] = await sql<{ secret: string }[]>`select cadence.new_webhook_secret() as secret`;
  const receiver = await startEventReceiver({ secret, clock, answer: () => (random() < 0.5 ? 500 : 200) });
  let worker: ChildProcess | undefined;
  let kills = 0;
  try {
    await sql`update public.event_endpoints set enabled = false, disabled_at = now() where enabled`;
    const [{ first }] = await sql<{ first: string }[]>`select coalesce(max("position"), 0)::text as first from public.events`;
    const [endpoint] = await sql<{ id: string }[]>`
      insert into public.event_endpoints (url, secret, batch_size, notify_email, next_attempt_at)
      values (${receiver.url}, ${secret}, 50, 'proof@example.com', ${new Date(epoch).toISOString()}) returning id`;

    const start = () => {
      worker = spawn(options.deno, ["run", "-A", "test/events/delivery-worker.ts"], {
        cwd: options.root,
        stdio: "ignore",
        env: { ...process.env, DATABASE_URL: options.url, CLOCK_EPOCH: String(epoch), CLOCK_RATE: String(CLOCK_RATE) },
      });
    };
    const kill = async () => {
      const exited = new Promise((resolve) => worker?.once("exit", resolve));
      worker?.kill("SIGKILL");
      await exited;
      kills += 1;
    };
    start();

    // The fleet's accounts and keys, then staff and the platform changing them until the end.
    const tag = `${options.seed}${Date.now() % 100000}`.slice(-6).padStart(6, "0");
    const keys = Array.from({ length: options.keys }, (_, i) => `PRF${tag[0]}-${tag.slice(1, 5)}-${tag[5]}${String(i).padStart(3, "0")}-0001`);
    for (const key of keys) {
      const [account] = await sql<{ id: string }[]>`insert into public.accounts (email, display_name) values (${`${key.toLowerCase()}@example.com`}, 'Proof') returning id`;
      await sql`insert into public.license_keys (key, account_id, email) values (${key}, ${account.id}, ${`${key.toLowerCase()}@example.com`})`;
    }
    const deadline = Date.now() + options.seconds * 1000;
    const killer = (async () => {
      while (Date.now() < deadline) {
        await pause(options.killEveryMs);
        await kill();
        start();
      }
    })();
    const change = async () => {
      while (Date.now() < deadline) {
        const key = keys[Math.floor(random() * keys.length)];
        const which = random();
        if (which < 0.3) await sql`select * from cadence.suspend_license_key(${key})`;
        else if (which < 0.6) await sql`select * from cadence.reinstate_license_key(${key})`;
        else if (which < 0.8) await sql`update public.license_keys set time_zone = ${random() < 0.5 ? "Europe/Berlin" : "UTC"} where key = ${key}`;
        else await sql`select cadence.set_system_name(${key}, ${`Kiosk ${Math.floor(random() * 1000)}`})`;
        await pause(5);
      }
    };
    await Promise.all([change(), change(), change(), killer]);

    // The drain: the last worker is left alone until the endpoint owes nothing.
    const drainedBy = Date.now() + options.drainMs;
    for (;;) {
      const [{ owed }] = await sql<{ owed: number }[]>`
        select count(*)::integer as owed from public.event_deliveries where endpoint_id = ${endpoint.id} and delivered_at is null`;
      if (owed === 0 || Date.now() > drainedBy) break;
      await pause(100);
    }
    await kill();

    const recorded = await sql<{ id: string; stream: string; sequence: string }[]>`
      select id, coalesce(license_key, account_id::text) as stream, sequence::text
        from public.events where "position" > ${first}::bigint order by "position"`;
    return judge(recorded, receiver.messages, kills);
  } finally {
    worker?.kill("SIGKILL");
    await receiver.close();
    await sql.end();
  }
}

function judge(recorded: Array<{ id: string; stream: string; sequence: string }>, messages: ReceivedMessage[], kills: number): ProofVerdict {
  const accepted = messages.filter((message) => message.verified && message.status >= 200 && message.status < 300);
  const idsOf = new Map<string, Set<string>>();
  const lastOf = new Map<string, number>();
  let outOfOrder = 0;
  let duplicates = 0;
  for (const message of accepted) {
    for (const event of message.events) {
      const ids = idsOf.get(event.id) ?? new Set<string>();
      if (idsOf.has(event.id)) {
        duplicates += 1;
      } else {
        const stream = event.license_key ?? event.account_id ?? "";
        if (event.sequence !== (lastOf.get(stream) ?? event.sequence - 1) + 1) outOfOrder += 1;
        lastOf.set(stream, event.sequence);
      }
      ids.add(message.webhookId);
      idsOf.set(event.id, ids);
    }
  }
  return {
    events: recorded.length,
    messages: messages.length,
    refused: messages.filter((message) => message.status >= 300).length,
    kills,
    missing: recorded.filter((event) => !idsOf.has(event.id)).length,
    underSeveralIds: [...idsOf.values()].filter((ids) => ids.size > 1).length,
    outOfOrder,
    unverified: messages.filter((message) => !message.verified).length,
    duplicates,
  };
}
