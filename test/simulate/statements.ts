import { writeFileSync } from "node:fs";
import type postgres from "postgres";

/**
 * Server settings that make Postgres count every statement's time (contrib pg_stat_statements),
 * nested ones too: a batch function's own statements are where its time goes.
 */
export const STATEMENT_SETTINGS = { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track": "all" };

/**
 * Counts from here (the fleet inserted, the run about to start): the extension's view, in a
 * database whose server runs with STATEMENT_SETTINGS, and every count so far reset.
 */
export async function countStatementsFromHere(sql: postgres.Sql): Promise<void> {
  await sql.unsafe("create extension if not exists pg_stat_statements");
  await sql.unsafe("select pg_stat_statements_reset()");
}

/**
 * Writes to `file` the run's `limit` costliest statements by total execution time, one JSON object
 * a line: calls, total and mean milliseconds, rows, shared buffers hit, whether it was sent by a
 * client (`toplevel`) or ran inside a function, and its text (whitespace folded, cut at 300).
 */
export async function writeCostliestStatements(sql: postgres.Sql, file: string, limit = 40): Promise<void> {
  const rows = await sql.unsafe(
    `select calls, round(total_exec_time::numeric, 1) as total_ms, round(mean_exec_time::numeric, 3) as mean_ms, rows,
            shared_blks_hit as buffers_hit, toplevel, left(regexp_replace(query, '\\s+', ' ', 'g'), 300) as query
       from pg_stat_statements order by total_exec_time desc limit $1`,
    [limit],
  );
  writeFileSync(file, rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
}
