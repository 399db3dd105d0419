/**
 * A one-dimensional array as Postgres's array text (`{"a","b",NULL}`), which the statement casts
 * (`$1::text[]`): every element quoted and escaped, null as NULL.
 */
export function arrayLiteral(values: readonly unknown[]): string {
  const element = (value: unknown) =>
    value === null || value === undefined ? "NULL" : `"${String(value).replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
  return `{${values.map(element).join(",")}}`;
}

/**
 * A value as a string constant of unknown type (`E'it''s'`), which Postgres resolves from its
 * context exactly as it resolves an untyped parameter. The `E''` form escapes the same whatever
 * `standard_conforming_strings` says. A NUL would end the statement's text early, and Postgres
 * text cannot hold one anyway, so it is refused, as a parameter holding one is.
 */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (Array.isArray(value)) return sqlLiteral(arrayLiteral(value));
  if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError(`${value} cannot be a statement value`);
  if (typeof value !== "string" && typeof value !== "number" && typeof value !== "bigint") {
    throw new TypeError(`a ${typeof value} cannot be a statement value`);
  }
  const text = String(value);
  if (text.includes("\0")) throw new TypeError("a statement value cannot hold a NUL character");
  return `E'${text.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/** A quoted string or identifier (left as it is), or a placeholder `$n`. */
const PLACEHOLDER = /'(?:[^']|'')*'|"(?:[^"]|"")*"|\$(\d+)/g;

/**
 * `text` with each placeholder `$n` replaced by `values[n - 1]` as a literal (`sqlLiteral`);
 * quoted strings and identifiers in `text` are left alone.
 *
 * Why: without prepared statements (Supabase's transaction pooler), postgres.js sends a statement
 * that has parameters in two round trips, Parse and Describe first to learn the parameter types,
 * then Bind and Execute; the same statement with its values written in goes in one. It stays the
 * extended protocol, which runs one statement per message, never a second one smuggled in.
 *
 * @example
 * withValuesInline("select cadence.set_system_name($1, $2)", ["DEMO-0000-0000-0001", "Lobby"]);
 * // select cadence.set_system_name(E'DEMO-0000-0000-0001', E'Lobby')
 */
export function withValuesInline(text: string, values: readonly unknown[]): string {
  return text.replace(PLACEHOLDER, (match: string, position: string | undefined) => {
    if (position === undefined) return match;
    const at = Number(position) - 1;
    if (at < 0 || at >= values.length) throw new RangeError(`there is no value for $${position}`);
    return sqlLiteral(values[at]);
  });
}
