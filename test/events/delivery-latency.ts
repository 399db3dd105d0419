import { type ChildProcess, spawn } from "node:child_process";
import postgres from "postgres";
import { openTestEndpoint } from "./test-endpoint.ts";

// Issue 61, item 4: "with the receiver up, the p99 from change to delivery is 2 s or less". The
// real server (functions/api/index.ts on DATABASE_URL, its own clock) delivers while staff and the
// platform change keys; the receiver accepts every verified request and notes when each arrived.
// An event's latency is its arrival less its occurred_at (the change's transaction start, so a
// change's own statement time counts too). `npm run events:proof` runs it after the kill proof.

export interface LatencyOptions {
  /** A migrated database (superuser URL). */
  url: string;
  /** The Deno binary and the project's root, to run the server. */
  deno: string;
  root: string;
  seconds: number;
  keys: number;
}

export interface LatencyVerdict {
  changes: number;
  events: number;
  messages: number;
  /** Events recorded but not accepted once the changes stopped and the drain ended. */
  missing: number;
  unverified: number;
  ms: { p50: number; p99: number; max: number };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

export async function measureDeliveryLatency(options: LatencyOptions): Promise<LatencyVerdict> {
  const sql = postgres(options.url, { max: 6, onnotice: () => {} });
  const endpoint = await openTestEndpoint(sql, { notifyEmail: "latency@example.com" });
  let server: ChildProcess | undefined;
  try {
    const tag = String(Date.now() % 1_000_000).padStart(6, "0");
    const keys = Array.from({ length: options.keys }, (_, i) => `LAT${tag[0]}-${tag.slice(1, 5)}-${tag[5]}${String(i).padStart(3, "0")}-0001`);
    for (const key of keys) {
      const [account] = await sql<{ id: string }[]>`insert into public.accounts (email, display_name) values (${`${key.toLowerCase()}@example.com`}, 'Latency') returning id`;
      await sql`insert into public.license_keys (key, account_id, email) values (${key}, ${account.id}, ${`${key.toLowerCase()}@example.com`})`;
    }
    let output = "";
    server = spawn(options.deno, ["run", "-A", "functions/api/index.ts"], {
      cwd: options.root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DATABASE_URL: options.url, PORT: "0", ADMIN_PORT: "0" },
    });
    server.stdout!.on("data", (chunk: Buffer) => (output += chunk));
    server.stderr!.on("data", (chunk: Buffer) => (output += chunk));
    while (!/"event":"listening"/.test(output)) {
      if (server.exitCode !== null) throw new Error(`the server exited:\n${output}`);
      await pause(50);
    }
    // What the start's own pass delivered (the keys' creation) is not measured: the changes start now.
    const startedAt = Date.now();
    const deadline = Date.now() + options.seconds * 1000;
    let changes = 0;
    const change = async (lane: number) => {
      for (let i = lane; Date.now() < deadline; i += 3) {
        // Each round over the keys makes another kind of change, each one a change (an event).
        const key = keys[i % keys.length];
        const round = Math.floor(i / keys.length);
        const which = round % 4;
        if (which === 0) await sql`select * from cadence.suspend_license_key(${key})`;
        else if (which === 1) await sql`select * from cadence.reinstate_license_key(${key})`;
        else if (which === 2) await sql`update public.license_keys set time_zone = ${round % 8 < 4 ? "Europe/Berlin" : "UTC"} where key = ${key}`;
        else await sql`select cadence.set_system_name(${key}, ${`Kiosk ${round}`})`;
        changes += 1;
        await pause(5);
      }
    };
    await Promise.all([change(0), change(1), change(2)]);
    await endpoint.drain(120_000);
    const recorded = (await endpoint.recorded()).filter((event) => event.occurred >= startedAt);
    const arrived = new Map<string, number>();
    for (const message of endpoint.receiver.messages) {
      if (!message.verified || message.status !== 200) continue;
      for (const event of message.events) if (!arrived.has(event.id)) arrived.set(event.id, message.receivedAt);
    }
    const latencies = recorded.filter((event) => arrived.has(event.id)).map((event) => arrived.get(event.id)! - event.occurred).sort((a, b) => a - b);
    return {
      changes,
      events: recorded.length,
      messages: endpoint.receiver.messages.length,
      missing: recorded.filter((event) => !arrived.has(event.id)).length,
      unverified: endpoint.receiver.messages.filter((message) => !message.verified).length,
      ms: { p50: Math.round(percentile(latencies, 50)), p99: Math.round(percentile(latencies, 99)), max: Math.round(latencies.at(-1) ?? 0) },
    };
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once("exit", resolve));
      server.kill("SIGTERM");
      await exited;
    }
    await endpoint.receiver.close();
    await sql.end();
  }
}
