/// <reference lib="deno.ns" />
// How fast a fresh instance answers, as an edge function starting cold would: importing what the
// edge path loads, and the time from process start to a first answer, beside a bare Deno.serve.
import { startV8Flags } from "../support/server.ts";

const root = new URL("../../", import.meta.url);
const deno = new URL("node_modules/.bin/deno", root).pathname;

export interface ColdStart {
  /** Median over `runs` fresh processes of importing functions/app/app.ts and runtime.ts. */
  importMs: number;
  /** Median time from spawning the entry to its first 200 (`/api/v2/frequencies`). */
  firstAnswerMs: number;
  /** The same for a bare Deno.serve answering fixed bytes. */
  bareFirstAnswerMs: number;
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];

async function importOnce(): Promise<number> {
  // The entry's V8 flags: Deno's code cache is kept per flag set, so alternating flag sets between
  // this probe and the entry's runs would make every import compile from scratch (about 300 ms).
  const args = ["run", "-A", ...startV8Flags, new URL("edge-import.ts", import.meta.url).pathname];
  const output = await new Deno.Command(deno, { args, stdout: "piped", stderr: "null" }).output();
  return JSON.parse(new TextDecoder().decode(output.stdout)).importMs;
}

/** Spawns `args` under Deno on a free port and times its first 200 on `path`. */
async function firstAnswer(args: string[], env: Record<string, string>, path: string): Promise<number> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  const started = performance.now();
  const child = new Deno.Command(deno, {
    args,
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "/root", NO_COLOR: "1", PORT: String(port), ...env },
    clearEnv: true,
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (;;) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}${path}`);
        await response.body?.cancel();
        if (response.status === 200) return performance.now() - started;
      } catch {
        // Not listening yet.
      }
      if (performance.now() - started > 30_000) throw new Error(`${args.join(" ")} gave no answer within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
}

/**
 * Measures `runs` times each: the import, the entry on `SUPABASE_DB_URL` (the edge path, limits
 * in memory) and a bare Deno.serve.
 */
export async function measureColdStart(supabaseDbUrl: string, runs = 5): Promise<ColdStart> {
  const imports: number[] = [];
  const entry: number[] = [];
  const bare: number[] = [];
  const body = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(body, "[]");
    for (let run = 0; run < runs; run++) {
      imports.push(await importOnce());
      entry.push(await firstAnswer(["run", "-A", ...startV8Flags, "functions/api/index.ts"], { SUPABASE_DB_URL: supabaseDbUrl }, "/api/v2/frequencies"));
      bare.push(await firstAnswer(["run", "-A", new URL("baselines/fixed-json.ts", import.meta.url).pathname, body], {}, "/"));
    }
  } finally {
    await Deno.remove(body);
  }
  return { importMs: median(imports), firstAnswerMs: median(entry), bareFirstAnswerMs: median(bare) };
}
