import { configSchema } from "./config.ts";

/** The variables `npm start` reads, as the config schema declares them, a few to a line. */
function variableLines(): string[] {
  const names = Object.keys(configSchema.shape);
  const lines: string[] = [];
  for (let at = 0; at < names.length; at += 6) lines.push(`  ${names.slice(at, at + 6).join(", ")}`);
  return lines;
}

/**
 * What `npm start -- --help` prints. The server takes no arguments: everything it is told comes
 * from the environment, as on Supabase.
 */
export const START_USAGE = [
  "usage: npm start",
  "Serves the v2 interface on http://127.0.0.1:$PORT (8000): from DATABASE_URL's Postgres, or else",
  "from PostgreSQL 15 that it starts in DATA_DIR (.data), migrated and loaded with the demo data.",
  "It takes no arguments; it reads these environment variables (README.md, Configuration):",
  ...variableLines(),
].join("\n");
