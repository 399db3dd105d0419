import { Failure } from "../errors.ts";

/** The contract (its 413s): request bodies of the POST routes are at most 64 KiB. */
export const BODY_LIMIT_BYTES = 64 * 1024;
/** A client that has not finished sending its body by then is cut off (a trickled body holds no worker). */
export const BODY_DEADLINE_MS = 10_000;

/**
 * Reads a request body, refusing it (413) as soon as it passes `limit` bytes, whatever
 * Content-Length claims, so a chunked or lying client is cut off instead of buffered whole; a
 * client that closes its connection mid-body is `body_incomplete`, a client's doing, not an error.
 *
 * @example
 * const bytes = await readBody(request);
 */
export async function readBody(request: Request, limit = BODY_LIMIT_BYTES, deadlineMs = BODY_DEADLINE_MS) {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw new Failure("body_too_large");
  if (!request.body) return new Uint8Array(0);

  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Failure("body_timeout")), deadlineMs);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), deadline]);
      if (done) break;
      size += value.byteLength;
      if (size > limit) throw new Failure("body_too_large");
      chunks.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    // Anything but our own refusals is the stream failing: the client gave up before sending it all.
    throw error instanceof Failure ? error : new Failure("body_incomplete");
  } finally {
    clearTimeout(timer);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Every string of a parsed body as well-formed Unicode, a lone surrogate (`"\udc00"`, which JSON
 * may carry as an escape) replaced by U+FFFD, as UTF-8 would write it to Postgres. So validation
 * sees what will be stored and the answer echoes it. The other inputs cannot carry one: the body's bytes must be
 * UTF-8 (above), and path and query are percent-decoded as UTF-8 and headers are bytes.
 */
function wellFormed(_key: string, value: unknown): unknown {
  return typeof value === "string" ? value.toWellFormed() : value;
}

/**
 * Parses a UTF-8 JSON body, its strings made well-formed Unicode: `body_required` when it is empty
 * or blank, `invalid_json` for bad UTF-8 or bad JSON.
 */
export function parseJsonBody(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new Failure("invalid_json");
  }
  if (text.trim() === "") throw new Failure("body_required");
  try {
    return JSON.parse(text, wellFormed);
  } catch {
    throw new Failure("invalid_json");
  }
}

/**
 * Reads a request body that must be a JSON object, failing in this order:
 * `content_type` (not JSON; checked before any byte is read), `body_too_large` (over 64 KiB, while
 * reading), `body_required` (empty or blank), `invalid_json` (not UTF-8 JSON, or JSON that is not
 * an object: an array, a string, a number or null is no object to find the fields in).
 *
 * @example
 * const fields = await readJsonObject(c.req.raw);
 */
export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  if (!isJsonContentType(request)) throw new Failure("content_type");
  const value = parseJsonBody(await readBody(request));
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Failure("invalid_json");
  return value as Record<string, unknown>;
}

/** True when the Content-Type names JSON (`application/json`, with or without parameters). */
export function isJsonContentType(request: Request): boolean {
  const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  return type === "application/json" || (type?.startsWith("application/") === true && type.endsWith("+json"));
}
