import process from "node:process";

/** The uid and gid PostgreSQL sees itself as inside its user namespace: any but 0 will do. */
const INSIDE_ID = "1";

/**
 * The command that runs `program` as PostgreSQL wants it run: as the calling user, unless that is
 * root, which initdb, pg_ctl and postgres refuse. As root (containers, CI), the program runs in a
 * user namespace of its own (util-linux `unshare`) where root's uid appears as an ordinary one:
 * PostgreSQL is no longer root to itself, and the kernel still checks its files as root's own
 * (owner bits, no capabilities). So it reaches a checkout in a 0700 directory (`/root`, every
 * `mktemp -d`), which a `postgres` user could not enter, and every file it writes stays root's.
 *
 * @example
 * const [command, args] = unprivileged(initdb, ["-D", dir]);
 * spawn(command, args);
 */
export function unprivileged(program: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [program, args];
  return ["unshare", ["--user", `--map-user=${INSIDE_ID}`, `--map-group=${INSIDE_ID}`, "--", program, ...args]];
}
