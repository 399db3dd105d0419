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

/** util-linux's words when the kernel refuses the namespace (`unshare: unshare failed: Operation not permitted`), or a machine without unshare. */
const NAMESPACE_REFUSED = /unshare: (unshare failed|write failed|cannot open)[^\n]*|spawn unshare ENOENT/;

/**
 * What to tell the operator when `unprivileged` could not give root's PostgreSQL a namespace (a
 * container whose seccomp profile forbids it, a kernel without user namespaces, no util-linux): one
 * line naming the two ways out; undefined when `output` says something else.
 *
 * @example
 * const why = namespaceRefused(stderr); // "PostgreSQL does not run as root, ..."
 */
export function namespaceRefused(output: string): string | undefined {
  const refused = NAMESPACE_REFUSED.exec(output)?.[0];
  if (!refused) return undefined;
  return `PostgreSQL does not run as root, and this machine refused the user namespace it would run in as an ordinary user (${refused.trim()}): run npm start as an ordinary user, or set DATABASE_URL to a Postgres of your own`;
}
