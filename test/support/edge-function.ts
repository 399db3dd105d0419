import { spawn } from "node:child_process";

const root = new URL("../../", import.meta.url);
const deno = new URL("node_modules/.bin/deno", root).pathname;

export interface RunningFunction {
  url: string;
  /** Everything the function printed so far. */
  logs(): string;
  stop(): Promise<void>;
}

/**
 * Starts an edge function's entry (e.g. `functions/auth-email-hook/index.ts`) under Deno on a free
 * port, as `supabase functions serve` would run it.
 */
export async function startEdgeFunction(entry: string, env: Record<string, string>): Promise<RunningFunction> {
  const child = spawn(deno, ["run", "-A", entry], {
    cwd: root.pathname,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", NO_COLOR: "1", PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start:\n${output}`)), 60_000);
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk;
      const match = /"event":"listening","port":(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code}:\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    logs: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await exited;
    },
  };
}
