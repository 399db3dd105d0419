/**
 * Structured log lines (one JSON object per line). Never pass secrets, full keys or webhook bodies;
 * `consoleLogger` also masks any license key or e-mail address that reaches a line by another way
 * (a path, a driver's error message), so no route or error can put a credential in the logs.
 */
export type Logger = (level: "info" | "warn" | "error", event: string, fields?: Record<string, unknown>) => void;

/** Writes JSON lines to the console, every key and e-mail in them masked (`redact`); errors to stderr. */
export const consoleLogger: Logger = (level, event, fields = {}) => {
  const line = redact(JSON.stringify({ time: new Date().toISOString(), level, event, ...fields }));
  if (level === "error") console.error(line);
  else console.log(line);
};

/**
 * An error's message, for a log line or a stored failure reason. Not every thrower throws an
 * Error (drivers may reject with plain objects): their `message`, else their JSON,
 * never `[object Object]`.
 *
 * @example
 * errorMessage({ message: "connection reset" }); // "connection reset"
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "object" && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === "string" && message !== "") return message;
    try {
      return JSON.stringify(error) ?? String(error);
    } catch {
      // A cyclic or BigInt-holding object: its constructor's name is all that can be said.
      return `${error.constructor?.name ?? "Object"} (not serialisable)`;
    }
  }
  return String(error);
}

/** Shows the first block of a license key only: enough to correlate, useless to an attacker. */
export function maskKey(key: string): string {
  return `${key.slice(0, 4)}-****-****-****`;
}

/** Anything of a license key's shape, in any case: a path or an error message may carry one. */
const LICENSE_KEYS = /\b([a-z0-9]{4})-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}\b/gi;
/** Anything of an e-mail's shape (text@text.text), whether it is one or not: over-masking costs nothing. */
const EMAILS = /[^\s@"'<>()[\],;:\\/]+@[^\s@"'<>()[\],;:\\/]+\.[^\s@"'<>()[\],;:\\/]+/g;

/**
 * `text` with every license key masked as `maskKey` masks it and every e-mail address replaced by
 * its domain (`***@example.com`): the one place that keeps credentials out of log lines whatever
 * put them there.
 *
 * @example
 * redact("key DEMO-0000-0000-0001 of demo@example.com"); // "key DEMO-****-****-**** of ***@example.com"
 */
export function redact(text: string): string {
  return text
    .replace(LICENSE_KEYS, (_, first: string) => maskKey(first))
    .replace(EMAILS, (email) => `***@${email.slice(email.lastIndexOf("@") + 1)}`);
}
