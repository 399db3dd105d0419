import { Failure } from "../errors.ts";

/** Spec section 8: request bodies of the POST routes are at most 64 KiB. */
export const BODY_LIMIT_BYTES = 64 * 1024;
/** A client that has not finished sending its body by then is cut off (a trickled body holds no worker). */
export const BODY_DEADLINE_MS = 10_000;

/**
 * Reads a request body, refusing it (413) as soon as it passes `limit` bytes, whatever
 * Content-Length claims, so a chunked or lying client is cut off instead of buffered whole.
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
    throw error;
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

/** The outcome of parsing a JSON body: the value, or why there is none. */
export type ParsedJson = { ok: true; value: unknown } | { ok: false; reason: "empty" | "invalid" };

/** Parses UTF-8 JSON. An empty or blank body is `empty`; bad UTF-8 or bad JSON is `invalid`. */
export function parseJson(bytes: Uint8Array): ParsedJson {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, reason: "invalid" };
  }
  if (text.trim() === "") return { ok: false, reason: "empty" };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, reason: "invalid" };
  }
}

/** True when the Content-Type names JSON (`application/json`, with or without parameters). */
export function isJsonContentType(request: Request): boolean {
  const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  return type === "application/json" || (type?.startsWith("application/") === true && type.endsWith("+json"));
}
