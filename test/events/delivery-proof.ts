import { type ChildProcess, spawn } from "node:child_process";
import postgres from "postgres";
import { type DeliveryVerdict, judgeDelivery } from "./delivery-verdict.ts";
import { openTestEndpoint } from "./test-endpoint.ts";

// Issue 61, item 4, for the delivery worker alone, on a clock 20 times faster than the real one so
// that half the requests can fail and their backoffs still pass in seconds. Staff edits and
// lifecycle changes run against a real database while a delivery worker
// (test/events/delivery-worker.ts, the app's followEvents under Deno) is killed with SIGKILL every
// `killEveryMs`, and the receiver, which verifies every request with the `standardwebhooks`
// package, fails half of them at random (never more than three in a row). Then the worker drains what is left, and the verdict
// compares what arrived with what was recorded (test/events/delivery-proof.test.ts). The issue's
// proof, the whole server killed on the real clock, is test/simulate/server-kill-proof.ts.

/** What the proof saw; it holds when the delivery verdict's `missing`, `underSeveralIds`, `outOfOrder` and `unverified` are all 0. */
export interface ProofVerdict extends DeliveryVerdict {
  kills: number;
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
  // Half the requests refused at random, but never more than three in a row: a streak of k earns a
  // backoff of 5 s * 2^(k-1), and one of nine (a run in fifty) outlasts the drain even at 20x.
  let refusedInARow = 0;
  const answer = () => {
    refusedInARow = refusedInARow < 3 && random() < 0.5 ? refusedInARow + 1 : 0;
    return refusedInARow > 0 ? 500 : 200;
  };
  const endpoint = await openTestEndpoint(sql, { notifyEmail: "proof@example.com", batchSize: 50, clock, answer });
  let worker: ChildProcess | undefined;
  let kills = 0;
  try {
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
    await endpoint.drain(options.drainMs);
    await kill();
    return { ...judgeDelivery(await endpoint.recorded(), endpoint.receiver.messages), kills };
  } finally {
    worker?.kill("SIGKILL");
    await endpoint.receiver.close();
    await sql.end();
  }
}
