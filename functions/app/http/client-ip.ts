/** What the entry hands the app about the connection (Hono's `c.env`). */
export interface ConnectionInfo {
  /** The socket peer's address. */
  remoteAddr?: string;
}

/**
 * The client IP used for rate limits: the socket peer, or, behind a trusted proxy, the first
 * address of X-Forwarded-For (the original client, as Supabase's edge and most proxies write it).
 */
export function clientIp(request: Request, connection: ConnectionInfo | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get("x-forwarded-for")?.split(",")[0].trim();
    if (forwarded) return forwarded;
  }
  return connection?.remoteAddr ?? "unknown";
}
