import { Failure } from "../errors.ts";
import { isJsonContentType, parseJson, readBody } from "../http/body.ts";

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
  const parsed = parseJson(await readBody(request));
  if (!parsed.ok) throw new Failure(parsed.reason === "empty" ? "body_required" : "invalid_json");
  const { value } = parsed;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Failure("invalid_json");
  return value as Record<string, unknown>;
}
