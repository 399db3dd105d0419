// The production start (`npm run start:workers`): one worker process per core (DENO_JOBS), each the
// API entry (functions/api/index.ts) on a port of its own, PORT + i - 1, with its admin listener on
// ADMIN_PORT + i - 1 (127.0.0.1). HAProxy checks each as a server of its own
// (functions/production/haproxy.cfg), so a worker whose event loop is stuck is taken out of the
// proxy alone, and one worker can be restarted while the others serve.
//
// Its arguments are the Deno binary to run each worker with, by its path, then the worker's Deno
// command line (package.json), run with PORT, ADMIN_PORT and WORKER set. By path, not as this
// process's own binary: a deploy's `npm ci` replaces node_modules/deno/deno, and a worker started
// from the supervisor's own (deleted) binary failed to spawn and took the supervisor with it. SIGHUP restarts the workers one at a time (a deploy: each drains, exits, starts on the
// new code, and is taken back by the proxy before the next goes); SIGTERM or SIGINT stops them all,
// each draining; a worker that exits on its own is started again after a pause. Each worker's log
// lines are passed through as they are.
import { STOP_WITHIN_MS } from "../app/admin/graceful-stop.ts";
import { DEFAULT_ADMIN_PORT } from "../app/config.ts";
import { configFromEnvironment } from "../app/environment.ts";
import { consoleLogger, errorMessage } from "../app/log.ts";
import { orExitOnOperatorError } from "../app/operator-error.ts";
import { refuseUnshared } from "../app/shared-by-workers.ts";

/** A worker that exits on its own is started again after this, doubled on each exit up to `RESTART_MOST_MS`. */
const RESTART_FIRST_MS = 1_000;
const RESTART_MOST_MS = 30_000;
/** A worker that ran this long before exiting starts again after `RESTART_FIRST_MS`: its exit was not a loop. */
const STABLE_AFTER_MS = 60_000;
/** A stopped worker gets this long beyond its own bound (graceful-stop.ts) before it is killed. */
const KILL_AFTER_MS = STOP_WITHIN_MS + 5_000;

const config = configFromEnvironment();
const count = config.DENO_JOBS ?? navigator.hardwareConcurrency;
orExitOnOperatorError(() => refuseUnshared(config, count));
const [denoPath, ...workerArgs] = Deno.args;
if (workerArgs.length === 0) {
  console.error("usage: supervisor.ts <deno> <the worker's deno arguments>: npm run start:workers passes them (start-workers.sh)");
  Deno.exit(2);
}
const log = consoleLogger;
const adminBase = config.ADMIN_PORT ?? DEFAULT_ADMIN_PORT;
/** Port 0 asks each worker for a free port of its own (a restarted worker then takes another). */
const portOf = (base: number, worker: number) => (base === 0 ? 0 : base + worker - 1);

interface Running {
  child: Deno.ChildProcess;
  startedAt: number;
  /** The ports the worker's `listening` line names: PORT's and ADMIN_PORT's, or those taken for 0. */
  ports?: { port: number; adminPort: number };
  /** Resolves when the worker logs `ready`; never if it exits first. */
  ready: Promise<void>;
  /** Whether it has logged `ready`: an exit before that is its start failing, which its starter handles. */
  wasReady: boolean;
  /** Resolves when the worker logs `ready_checked`: the proxy has taken it (or nothing checks it). */
  checked: Promise<void>;
  exited: Promise<Deno.CommandStatus>;
}

interface Slot {
  worker: number;
  running?: Running;
  /** Set while the supervisor itself stops or replaces the worker: its exit is expected. */
  replacing: boolean;
  failures: number;
}

const slots: Slot[] = Array.from({ length: count }, (_, i) => ({ worker: i + 1, replacing: false, failures: 0 }));
let stopping = false;

/** Writes a worker's output, line by line, to ours, calling `onLine` with each. */
async function passThrough(stream: ReadableStream<Uint8Array>, to: typeof Deno.stdout, onLine: (line: string) => void) {
  const encoder = new TextEncoder();
  let partial = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      onLine(line);
      await to.write(encoder.encode(`${line}\n`)).catch(() => {});
    }
  }
  if (partial) await to.write(encoder.encode(`${partial}\n`)).catch(() => {});
}

/** A worker that could not be spawned: it exits at once, and is started again like any that exits. */
function unspawned(): Running {
  const exited = Promise.resolve({ success: false, code: 127, signal: null } as Deno.CommandStatus);
  const never = new Promise<void>(() => {});
  return { child: { kill() {} } as unknown as Deno.ChildProcess, startedAt: performance.now(), ready: never, wasReady: false, checked: never, exited };
}

function spawn(slot: Slot): Running {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(denoPath, {
      args: workerArgs,
      env: {
        PORT: String(portOf(config.PORT, slot.worker)),
        ADMIN_PORT: String(portOf(adminBase, slot.worker)),
        WORKER: String(slot.worker),
      },
      // The worker reads this pipe and stops when it closes: it outlives no supervisor.
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    // The binary missing for a moment (a deploy's npm ci between removing node_modules and
    // installing it again): the slot waits and tries again, the other workers serving.
    log("error", "worker_spawn_failed", { worker: slot.worker, error: errorMessage(error) });
    return unspawned();
  }
  let onReady!: () => void;
  let onChecked!: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const checked = new Promise<void>((resolve) => (onChecked = resolve));
  const events = (line: string) => {
    if (line.includes('"event":"listening"')) {
      const { port, adminPort } = JSON.parse(line) as { port: number; adminPort: number };
      running.ports = { port, adminPort };
    }
    if (line.includes('"event":"ready"')) {
      running.wasReady = true;
      onReady();
    }
    if (line.includes('"event":"ready_checked"')) onChecked();
  };
  void passThrough(child.stdout, Deno.stdout, events);
  void passThrough(child.stderr, Deno.stderr, events);
  const running: Running = { child, startedAt: performance.now(), ready, wasReady: false, checked, exited: child.status };
  void running.exited.then((status) => exited(slot, running, status));
  return running;
}

/**
 * A worker's exit: expected while replaced or stopping, and handled by its starter before it was
 * ready (startAll, rollingRestart); otherwise it is started again after a pause.
 */
function exited(slot: Slot, running: Running, status: Deno.CommandStatus) {
  if (!running.wasReady || slot.running !== running || slot.replacing || stopping) return;
  restartLater(slot, running, status);
}

/** Starts a worker that exited again, after a pause that doubles while it keeps exiting. */
function restartLater(slot: Slot, running: Running, status: Deno.CommandStatus) {
  slot.running = undefined;
  const ranMs = performance.now() - running.startedAt;
  slot.failures = ranMs > STABLE_AFTER_MS ? 1 : slot.failures + 1;
  const pauseMs = Math.min(RESTART_MOST_MS, RESTART_FIRST_MS * 2 ** (slot.failures - 1));
  log("error", "worker_exited", { worker: slot.worker, code: status.code, signal: status.signal, restartInMs: pauseMs });
  setTimeout(() => {
    if (stopping || slot.replacing || slot.running !== undefined) return;
    const next = (slot.running = spawn(slot));
    // Its own starter: one that exits again before it is ready (the database still down) waits longer.
    void Promise.race([next.ready.then(() => "ready" as const), next.exited]).then((outcome) => {
      if (outcome !== "ready" && slot.running === next && !slot.replacing && !stopping) restartLater(slot, next, outcome);
    });
  }, pauseMs);
}

/** Stops a worker as a deploy does (SIGTERM: it drains, graceful-stop.ts), killing it past its bound. */
async function stopWorker(running: Running): Promise<void> {
  try {
    running.child.kill("SIGTERM");
  } catch {
    // Already gone.
  }
  const killer = setTimeout(() => {
    try {
      running.child.kill("SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }, KILL_AFTER_MS);
  await running.exited;
  clearTimeout(killer);
}

/**
 * A worker that exits before it is ready means the start itself is wrong (a port in use, a
 * database that refuses): the whole start stops with its status, the worker's own line having said
 * why, and the service manager decides when to try again.
 */
async function startAll() {
  await Promise.all(slots.map(async (slot) => {
    const running = (slot.running = spawn(slot));
    const outcome = await Promise.race([running.ready.then(() => "ready" as const), running.exited]);
    if (outcome !== "ready") {
      log("error", "worker_failed_to_start", { worker: slot.worker, code: outcome.code });
      await stopAll(outcome.code || 1);
    }
  }));
  log("info", "workers_ready", {
    workers: count,
    ports: slots.map((slot) => slot.running?.ports?.port),
    adminPorts: slots.map((slot) => slot.running?.ports?.adminPort),
  });
}

/**
 * Replaces each worker in turn: it drains and exits, its successor starts on the same ports, and
 * the next goes only once the proxy has taken the successor (its first check found it ready), so
 * the others always carry the requests. A successor that exits before it is ready ends the round
 * there; it is then started again like any worker that exits, and the workers not yet replaced
 * keep running the code they run.
 */
async function rollingRestart() {
  const started = performance.now();
  log("info", "rolling_restart", { workers: count });
  for (const slot of slots) {
    if (stopping) return;
    slot.replacing = true;
    try {
      if (slot.running) await stopWorker(slot.running);
      const running = (slot.running = spawn(slot));
      const outcome = await Promise.race([running.ready.then(() => "ready" as const), running.exited]);
      if (outcome !== "ready") {
        log("error", "rolling_restart_stopped", { worker: slot.worker, code: outcome.code, reason: "the new worker exited before it was ready" });
        slot.replacing = false;
        restartLater(slot, running, outcome);
        return;
      }
      // Bounded by the worker itself: ready_checked comes at most CHECKED_WITHIN_MS (5 s) after ready.
      await Promise.race([running.checked, running.exited]);
      slot.failures = 0;
    } finally {
      slot.replacing = false;
    }
  }
  log("info", "rolling_restart_done", { workers: count, ms: Math.round(performance.now() - started) });
}

async function stopAll(code = 0): Promise<never> {
  if (!stopping) {
    stopping = true;
    await Promise.all(slots.map((slot) => slot.running && stopWorker(slot.running)));
  }
  Deno.exit(code);
}

let rolling: Promise<void> = Promise.resolve();
/** Deploys that come while one rolls wait for it: the last one's code is what every worker ends on. */
let queued = 0;
Deno.addSignalListener("SIGHUP", () => {
  if (queued > 0) return;
  queued += 1;
  rolling = rolling.then(() => {
    queued -= 1;
    return rollingRestart();
  });
});
Deno.addSignalListener("SIGTERM", () => void stopAll());
Deno.addSignalListener("SIGINT", () => void stopAll());

await startAll();
