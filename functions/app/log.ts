/** Structured log lines (one JSON object per line). Never pass secrets, full keys or webhook bodies. */
export type Logger = (level: "info" | "warn" | "error", event: string, fields?: Record<string, unknown>) => void;

/** Writes JSON lines to the console; errors to stderr. */
export const consoleLogger: Logger = (level, event, fields = {}) => {
  const line = JSON.stringify({ time: new Date().toISOString(), level, event, ...fields });
  if (level === "error") console.error(line);
  else console.log(line);
};

/** An error's message, for a log line or a stored failure reason. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Shows the first block of a license key only: enough to correlate, useless to an attacker. */
export function maskKey(key: string): string {
  return `${key.slice(0, 4)}-****-****-****`;
}
