import { statfsSync } from "node:fs";

const TMPFS_MAGIC = 0x01021994;
/** Room the suite's throwaway files take at their peak (the run's cluster and those some suites start, test databases, data directories of npm start), with margin. */
const NEEDED_BYTES = 4 * 1024 ** 3;

/**
 * Where the suite keeps its throwaway clusters and data directories: `/dev/shm` when it is a tmpfs
 * with room, else the usual temporary directory. On this project's ext4 disk (mounted with
 * `discard`), writing and dropping a hundred test databases cost the kernel ~35 s of CPU a run
 * (measured: system time 94 s with /tmp, 58 s with /dev/shm), the CPU the tests themselves need on
 * two cores. Nothing in them is meant to outlive the run, and fsync is off already.
 */
export function scratchSpace(): string | undefined {
  try {
    const stats = statfsSync("/dev/shm");
    return stats.type === TMPFS_MAGIC && stats.bavail * stats.bsize >= NEEDED_BYTES ? "/dev/shm" : undefined;
  } catch {
    return undefined;
  }
}
