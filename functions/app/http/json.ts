const jsonHeaders = { "content-type": "application/json" } as const;

/** A JSON response from an already serialised body (cached payloads are served as bytes). */
export function jsonText(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...jsonHeaders, ...headers } });
}

/** A JSON response from a value. */
export function json(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return jsonText(JSON.stringify(value), status, headers);
}
