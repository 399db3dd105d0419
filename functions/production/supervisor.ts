// The production start (`npm run start:workers`): one worker process per core (DENO_JOBS), each the
// API entry (functions/api/index.ts) on a port of its own, PORT + i - 1, with its admin listener on
// ADMIN_PORT + i - 1 (127.0.0.1). HAProxy checks each as a server of its own
// (functions/production/haproxy.cfg), so a worker whose event loop is stuck is taken out of the
// proxy alone, and one worker can be restarted while the others serve.
//
// Its arguments are the release directory, as a path that a deploy re-points (/opt/cadence/current,
// a symlink: release.sh), then the worker's Deno command line (package.json). Each worker runs in
// the release that path named when it started, from that release's own Deno binary, with PORT,
// ADMIN_PORT and WORKER set: a deploy builds the next release beside the running one, so its
// `npm ci` never replaces a file a running worker or this process uses. SIGHUP replaces the workers
// one at a time with the release the path names now (each drains, exits, its successor starts and
// is taken back by the proxy before the next goes); a successor that does not become ready puts
// every worker of the round back on the release it ran. SIGTERM or SIGINT stops them all, each
// draining; a worker that exits on its own is started again, in its release, after a pause. Each
// worker's log lines are passed through as they are.
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
/**
 * A new worker of a deploy that is not ready after this is taken for one that cannot start: its
 * migrations and first reads take a few seconds, more on a busy machine or a database far away.
 */
const READY_WITHIN_MS = 120_000;

const config = configFromEnvironment();
const count = config.DENO_JOBS ?? navigator.hardwareConcurrency;
orExitOnOperatorError(() => refuseUnshared(config, count));
const [releasePath, ...workerArgs] = Deno.args;
if (workerArgs.length === 0) {
  console.error("usage: supervisor.ts <release directory> <the worker's deno arguments>: npm run start:workers passes them (start-workers.sh)");
  Deno.exit(2);
}
/** The release `releasePath` names now, as a real path: what a worker started now runs. */
const releaseNow = () => Deno.realPathSync(releasePath);
const log = consoleLogger;
const adminBase = config.ADMIN_PORT ?? DEFAULT_ADMIN_PORT;
/** Port 0 asks each worker for a free port of its own (a restarted worker then takes another). */
const portOf = (base: number, worker: number) => (base === 0 ? 0 : base + worker - 1);

interface Running {
  child: Deno.ChildProcess;
  /** The release directory it runs in (a real path). */
  release: string;
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
  /** Resolves once everything the worker wrote has been passed on. */
  drained: Promise<void>;
}

interface Slot {
  worker: number;
  running?: Running;
  /** The release its last ready worker ran: where it starts again after an exit. */
  release: string;
  /** Set while the supervisor itself stops or replaces the worker: its exit is expected. */
  replacing: boolean;
  failures: number;
}

const firstRelease = releaseNow();
const slots: Slot[] = Array.from({ length: count }, (_, i) => ({ worker: i + 1, release: firstRelease, replacing: false, failures: 0 }));
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
function unspawned(release: string): Running {
  const exited = Promise.resolve({ success: false, code: 127, signal: null } as Deno.CommandStatus);
  const never = new Promise<void>(() => {});
  return { child: { kill() {} } as unknown as Deno.ChildProcess, release, startedAt: performance.now(), ready: never, wasReady: false, checked: never, exited, drained: Promise.resolve() };
}

function spawn(slot: Slot, release: string): Running {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(`${release}/node_modules/.bin/deno`, {
      args: workerArgs,
      cwd: release,
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
    // A release without its binary (removed by hand, an npm ci run inside it): the slot waits and
    // tries again, the other workers serving.
    log("error", "worker_spawn_failed", { worker: slot.worker, release, error: errorMessage(error) });
    return unspawned(release);
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
  const drained = Promise.all([passThrough(child.stdout, Deno.stdout, events), passThrough(child.stderr, Deno.stderr, events)]).then(() => {});
  const running: Running = { child, release, startedAt: performance.now(), ready, wasReady: false, checked, exited: child.status, drained };
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
    const next = (slot.running = spawn(slot, slot.release));
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
  // Its last lines ("stopped") may still be in the pipe when its exit is known: passed on before
  // this process exits, or the journal never sees how the worker stopped.
  await running.drained;
}

/**
 * A worker that exits before it is ready means the start itself is wrong (a port in use, a
 * database that refuses): the whole start stops with its status, the worker's own line having said
 * why, and the service manager decides when to try again.
 */
async function startAll() {
  await Promise.all(slots.map(async (slot) => {
    const running = (slot.running = spawn(slot, slot.release));
    const outcome = await Promise.race([running.ready.then(() => "ready" as const), running.exited]);
    if (outcome !== "ready") {
      // Its own line says why: passed on before this process exits.
      await running.drained;
      log("error", "worker_failed_to_start", { worker: slot.worker, code: outcome.code });
      await stopAll(outcome.code || 1);
    }
  }));
  log("info", "workers_ready", {
    workers: count,
    ports: slots.map((slot) => slot.running?.ports?.port),
    adminPorts: slots.map((slot) => slot.running?.ports?.adminPort),
    release: firstRelease,
  });
}

/**
 * Replaces the slot's worker with one of `release`: the old one drains and exits, the new one
 * starts on the same ports, and counts as started once the proxy has taken it (its first check
 * found it ready). Why it did not, otherwise: it exited first, or was not ready in time.
 */
async function replace(slot: Slot, release: string): Promise<string | undefined> {
  if (slot.running) await stopWorker(slot.running);
  const running = (slot.running = spawn(slot, release));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), READY_WITHIN_MS)));
  const outcome = await Promise.race([running.ready.then(() => "ready" as const), running.exited, late]);
  clearTimeout(timer);
  if (outcome === "ready") {
    // Bounded by the worker itself: ready_checked comes at most CHECKED_WITHIN_MS (5 s) after ready.
    await Promise.race([running.checked, running.exited]);
    slot.release = release;
    slot.failures = 0;
    return undefined;
  }
  if (outcome === "late") {
    await stopWorker(running);
    return `worker ${slot.worker} was not ready within ${READY_WITHIN_MS / 1000} s`;
  }
  return `worker ${slot.worker} exited with ${outcome.code} before it was ready`;
}

/** How the rounds went, for `systemctl reload` to wait on (reload-workers.sh); none outside systemd. */
const roundsFile = Deno.env.get("RUNTIME_DIRECTORY") ? `${Deno.env.get("RUNTIME_DIRECTORY")!.split(":")[0]}/rolling-restart` : undefined;
let round = 0;

/** `<round> <state> <release> <why>`: written whole (beside, then renamed), so a reader never sees half a line. */
function report(state: "running" | "done" | "stopped", release: string, why = "") {
  if (!roundsFile) return;
  try {
    Deno.writeTextFileSync(`${roundsFile}.new`, `${round} ${state} ${release} ${why}\n`);
    Deno.renameSync(`${roundsFile}.new`, roundsFile);
  } catch (error) {
    log("error", "rolling_restart_unreported", { file: roundsFile, error: errorMessage(error) });
  }
}

/**
 * Replaces each worker in turn with the release `releasePath` names now, so the others always
 * carry the requests. A successor that does not become ready ends the round, and every worker of
 * the round goes back, the same way, to the release it ran: a release that cannot start leaves
 * the old code serving everywhere, and the round says so (`rolling_restart_stopped`, and the
 * rounds file). A slot whose old release no longer starts either (the database down) is started
 * again after a pause, like any worker that exits.
 */
async function rollingRestart() {
  round += 1;
  const started = performance.now();
  let release: string;
  try {
    release = releaseNow();
  } catch (error) {
    log("error", "rolling_restart_stopped", { release: releasePath, reason: errorMessage(error) });
    report("stopped", releasePath, `${releasePath} names no release`);
    return;
  }
  log("info", "rolling_restart", { workers: count, release });
  report("running", release);
  const replaced: Array<{ slot: Slot; from: string }> = [];
  for (const slot of slots) {
    if (stopping) return;
    const from = slot.release;
    slot.replacing = true;
    try {
      const failed = await replace(slot, release);
      if (failed === undefined) {
        replaced.push({ slot, from });
        continue;
      }
      log("error", "rolling_restart_stopped", { worker: slot.worker, release, reason: failed, backTo: from });
      for (const back of [{ slot, from }, ...replaced.reverse()]) {
        if (stopping) return;
        back.slot.replacing = true;
        back.slot.release = back.from;
        try {
          const again = await replace(back.slot, back.from);
          if (again !== undefined && back.slot.running) restartLater(back.slot, back.slot.running, await back.slot.running.exited);
        } finally {
          back.slot.replacing = false;
        }
      }
      report("stopped", release, `${failed}; every worker is back on ${from}`);
      return;
    } finally {
      slot.replacing = false;
    }
  }
  log("info", "rolling_restart_done", { workers: count, release, ms: Math.round(performance.now() - started) });
  report("done", release);
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
