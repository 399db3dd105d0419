import { backendMessage, cString } from "./backend-messages.ts";

/**
 * COPY ... FROM STDIN on a backend that cannot wait for its client. PGlite runs a message to its
 * end in one call (execProtocolRaw); a COPY FROM STDIN that finds no copy data behind its query
 * in that call reads end-of-file, and Postgres exits on it: the embedded database is gone. So the
 * port answers such a query's CopyInResponse itself, keeps the client's CopyData until its
 * CopyDone (or CopyFail), then hands PGlite the query and the data in one call, where the COPY
 * reads them as it would from a socket.
 *
 * That needs the query recognised before PGlite sees it: a Query message whose text is one
 * statement, `COPY <table> [(<columns>)] FROM STDIN ...` (what psql's `\copy ... from` and a
 * pg_dump file run with `psql -f` send). Every other Query and every Execute goes to PGlite with a
 * CopyFail behind it (`GUARD`): outside COPY Postgres ignores a CopyFail, and a COPY FROM STDIN
 * this did not recognise (inside a multi-statement query, or through the extended protocol) fails
 * on it with the message below, instead of ending the database.
 */

/** What the client may buffer for one COPY FROM STDIN: its data is held in memory until CopyDone. */
export const COPY_FROM_STDIN_LIMIT = 64 * 1024 * 1024;

/** The CopyFail sent behind every query the port does not feed COPY data itself. */
export const GUARD = backendMessage(
  "f",
  cString(
    "the embedded database takes COPY FROM STDIN only as a query of its own (psql's \\copy, or psql -f on a pg_dump file): send that statement alone, with the simple query protocol",
  ),
);

/** A recognised COPY FROM STDIN: the overall format its CopyInResponse announces, and how many columns it names. */
export interface CopyFromStdin {
  binary: boolean;
  columns: number;
}

/**
 * `query` (a Query message's text) as a COPY FROM STDIN the port can feed, or undefined. It must
 * be the only statement; comments, quoted names and strings (standard, E'', dollar-quoted) are
 * read as Postgres' lexer reads them, so a statement that merely mentions `copy ... from stdin`
 * is not taken for one.
 *
 * @example
 * copyFromStdin("COPY public.license_keys (key, email) FROM stdin;"); // { binary: false, columns: 2 }
 */
export function copyFromStdin(query: string): CopyFromStdin | undefined {
  const statements = splitStatements(tokens(query));
  if (statements.length !== 1) return undefined;
  const [statement] = statements;
  if (!isWord(statement[0], "copy")) return undefined;
  let depth = 0;
  let columns = 0;
  let from = -1;
  for (let index = 1; index < statement.length; index++) {
    const token = statement[index];
    if (token.kind === "symbol" && token.text === "(") {
      depth++;
      if (depth === 1 && columns === 0) columns = 1;
    } else if (token.kind === "symbol" && token.text === ")") depth--;
    else if (depth === 1 && token.kind === "symbol" && token.text === ",") columns++;
    else if (depth === 0 && (isWord(token, "from") || isWord(token, "to"))) {
      from = isWord(token, "from") ? index : -1;
      break;
    }
  }
  if (from < 0 || !isWord(statement[from + 1], "stdin")) return undefined;
  const binary = statement.some((token, index) =>
    isWord(token, "binary") || (token.kind === "string" && token.text.toLowerCase() === "binary" && isWord(statement[index - 1], "format"))
  );
  return { binary, columns };
}

interface Token {
  kind: "word" | "quoted" | "string" | "symbol";
  text: string;
}

function isWord(token: Token | undefined, word: string): boolean {
  return token?.kind === "word" && token.text.toLowerCase() === word;
}

function splitStatements(all: Token[]): Token[][] {
  const statements: Token[][] = [[]];
  for (const token of all) {
    if (token.kind === "symbol" && token.text === ";") statements.push([]);
    else statements[statements.length - 1].push(token);
  }
  return statements.filter((statement) => statement.length > 0);
}

const IDENTIFIER_START = /[A-Za-z_\u0080-\uffff]/;
const IDENTIFIER_PART = /[A-Za-z0-9_$\u0080-\uffff]/;

/** Postgres' lexical structure, as far as statement boundaries and keywords need it. */
function tokens(text: string): Token[] {
  const found: Token[] = [];
  let index = 0;
  while (index < text.length) {
    const char = text[index];
    const next = text[index + 1];
    if (/\s/.test(char)) {
      index++;
    } else if (char === "-" && next === "-") {
      const end = text.indexOf("\n", index);
      index = end < 0 ? text.length : end + 1;
    } else if (char === "/" && next === "*") {
      index = blockCommentEnd(text, index);
    } else if (char === "'") {
      const end = quotedEnd(text, index, "'", false);
      found.push({ kind: "string", text: text.slice(index + 1, end - 1).replaceAll("''", "'") });
      index = end;
    } else if ((char === "E" || char === "e") && next === "'") {
      const end = quotedEnd(text, index + 1, "'", true);
      found.push({ kind: "string", text: text.slice(index + 2, end - 1) });
      index = end;
    } else if (char === '"') {
      const end = quotedEnd(text, index, '"', false);
      found.push({ kind: "quoted", text: text.slice(index + 1, end - 1) });
      index = end;
    } else if (char === "$" && dollarTag(text, index) !== undefined) {
      const tag = dollarTag(text, index)!;
      const close = text.indexOf(tag, index + tag.length);
      const end = close < 0 ? text.length : close + tag.length;
      found.push({ kind: "string", text: text.slice(index + tag.length, close < 0 ? text.length : close) });
      index = end;
    } else if (IDENTIFIER_START.test(char)) {
      let end = index + 1;
      while (end < text.length && IDENTIFIER_PART.test(text[end])) end++;
      found.push({ kind: "word", text: text.slice(index, end) });
      index = end;
    } else {
      found.push({ kind: "symbol", text: char });
      index++;
    }
  }
  return found;
}

/** Where a quoted string or name that opens at `start` ends (after its closing quote); a doubled quote stays inside. */
function quotedEnd(text: string, start: number, quote: string, backslashes: boolean): number {
  let index = start + 1;
  while (index < text.length) {
    if (backslashes && text[index] === "\\") index += 2;
    else if (text[index] === quote && text[index + 1] === quote) index += 2;
    else if (text[index] === quote) return index + 1;
    else index++;
  }
  return text.length;
}

/** Where a block comment that opens at `start` ends; block comments nest. */
function blockCommentEnd(text: string, start: number): number {
  let depth = 0;
  let index = start;
  while (index < text.length) {
    if (text.startsWith("/*", index)) {
      depth++;
      index += 2;
    } else if (text.startsWith("*/", index)) {
      depth--;
      index += 2;
      if (depth === 0) return index;
    } else index++;
  }
  return text.length;
}

/** The dollar-quote tag (`$$` or `$name$`) opening at `start`, or undefined for a parameter (`$1`) or a lone `$`. */
function dollarTag(text: string, start: number): string | undefined {
  const match = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(text.slice(start, start + 64));
  return match?.[0];
}
