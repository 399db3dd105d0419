import { readdirSync, readFileSync } from "node:fs";

/** Kernel clock ticks per second (USER_HZ), 100 on Linux. */
const TICKS = 100;

/**
 * The two clock-tick fields of `/proc/<pid>/stat` at `first` (counted after the parenthesised
 * command name) added, in seconds; 0 once the process is gone.
 */
function statSeconds(pid: number, first: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[first]) + Number(fields[first + 1])) / TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds (user + system: utime, stime) a process has used so far; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  return statSeconds(pid, 11);
}

/** The postmaster listening on `port` and its children (backends, checkpointer, ...). */
export function postgresPids(port: number): number[] {
  const processes = readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number);
  const parentOf = new Map<number, number>();
  let postmaster = 0;
  for (const pid of processes) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      parentOf.set(pid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (args[0].endsWith("/postgres") && args[args.indexOf("-p") + 1] === String(port)) postmaster = pid;
    } catch {
      // The process ended while we looked.
    }
  }
  if (postmaster === 0) return [];
  return [postmaster, ...processes.filter((pid) => parentOf.get(pid) === postmaster)];
}

/** Busy CPU seconds of the whole machine (all cores), from /proc/stat. */
export function machineBusySeconds(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq + steal) / TICKS;
}

/** Peak resident set size (VmHWM) of a process, in MiB. */
export function peakRssMib(pid: number): number {
  const line = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return line ? Number(line[1]) / 1024 : 0;
}

/**
 * CPU seconds of a process's children it has waited for (cutime + cstime): where a Postgres
 * backend's CPU goes when the connection closes, counted in the postmaster.
 */
export function reapedChildrenCpuSeconds(pid: number): number {
  return statSeconds(pid, 13);
}
