/// <reference lib="deno.ns" />
/** A baseline server process (test/bench/baselines/*.ts) on its own free port. */
export interface BaselineServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const deno = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;

/**
 * Starts `baselines/<script>` under Deno and waits for its `{"event":"listening","port":N}` line.
 *
 * @example
 * const bare = await startBaseline("fixed-json.ts", [bodyFile]);
 */
export async function startBaseline(script: string, args: string[]): Promise<BaselineServer> {
  const path = new URL(`baselines/${script}`, import.meta.url).pathname;
  const child = new Deno.Command(deno, { args: ["run", "-A", path, ...args], stdout: "piped", stderr: "inherit" }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let output = "";
  let port: number | undefined;
  while (port === undefined) {
    const { done, value } = await lines.read();
    if (done) throw new Error(`baseline ${script} exited before listening:\n${output}`);
    output += value;
    const match = /"event":"listening","port":(\d+)/.exec(output);
    if (match) port = Number(match[1]);
  }
  // Keep draining stdout so the process never blocks on a full pipe.
  (async () => {
    while (!(await lines.read()).done);
  })();
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
      await child.status;
    },
  };
}
