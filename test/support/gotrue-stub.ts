import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface StubUser {
  id: string;
  email: string;
  email_confirmed_at: string | null;
  user_metadata: Record<string, unknown>;
  app_metadata: Record<string, unknown>;
}

export interface ReceivedCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown> | undefined;
  status: number;
}

/**
 * A local stand-in for Supabase Auth's admin HTTP API on 127.0.0.1, as GoTrue answers it (API
 * version 2024-01-01: errors as `{ code, message }`): `POST /auth/v1/admin/users` creates a user
 * (422 `email_exists` when the e-mail is taken, case-insensitively, or the id is), `GET
 * /auth/v1/admin/users/:id` reads one (404 `user_not_found`), `PUT` there changes its e-mail (and
 * confirms it with `email_confirm`; 422 `email_exists` when another user has the address: GoTrue's
 * releases answer that, or 500, as their checks differ; Cadence treats both as a failed try). Every call must carry the service
 * role key as `apikey` and as `Authorization: Bearer`, or it gets 401. `failWith` makes the next
 * calls fail, as an outage would.
 */
export async function startGotrueStub(serviceRoleKey: string) {
  const users = new Map<string, StubUser>();
  const calls: ReceivedCall[] = [];
  let failure: { status: number; remaining: number } | undefined;

  function answer(res: ServerResponse, call: Omit<ReceivedCall, "status">, status: number, body: unknown) {
    calls.push({ ...call, status });
    res.statusCode = status;
    res.setHeader("content-type", "application/json");
    res.setHeader("x-supabase-api-version", "2024-01-01");
    res.end(JSON.stringify(body));
  }

  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const call = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: raw ? JSON.parse(raw) : undefined,
      };
      if (req.headers.apikey !== serviceRoleKey || req.headers.authorization !== `Bearer ${serviceRoleKey}`) {
        return answer(res, call, 401, { code: "no_authorization", message: "This endpoint requires a valid service role key" });
      }
      if (failure && failure.remaining > 0) {
        failure.remaining -= 1;
        return answer(res, call, failure.status, { code: "unexpected_failure", message: "stub outage" });
      }
      const byId = /^\/auth\/v1\/admin\/users\/([0-9a-f-]{36})$/.exec(call.path);
      if (call.method === "GET" && byId) {
        const user = users.get(byId[1]);
        return user
          ? answer(res, call, 200, user)
          : answer(res, call, 404, { code: "user_not_found", message: "User not found" });
      }
      if (call.method === "PUT" && byId) {
        const user = users.get(byId[1]);
        if (!user) return answer(res, call, 404, { code: "user_not_found", message: "User not found" });
        const body = call.body ?? {};
        if (typeof body.email === "string") {
          const email = body.email.toLowerCase();
          if ([...users.values()].some((other) => other.id !== user.id && other.email === email)) {
            return answer(res, call, 422, { code: "email_exists", message: "A user with this email address has already been registered" });
          }
          user.email = email;
        }
        if (body.email_confirm === true) user.email_confirmed_at = new Date().toISOString();
        return answer(res, call, 200, user);
      }
      if (call.method === "POST" && call.path === "/auth/v1/admin/users") {
        const body = call.body ?? {};
        const email = String(body.email ?? "").toLowerCase();
        const id = typeof body.id === "string" ? body.id : crypto.randomUUID();
        if ([...users.values()].some((user) => user.email === email) || users.has(id)) {
          return answer(res, call, 422, {
            code: "email_exists",
            message: "A user with this email address has already been registered",
          });
        }
        const user: StubUser = {
          id,
          email,
          email_confirmed_at: body.email_confirm === true ? new Date().toISOString() : null,
          user_metadata: (body.user_metadata as Record<string, unknown>) ?? {},
          app_metadata: { provider: "email", providers: ["email"], ...((body.app_metadata as Record<string, unknown>) ?? {}) },
        };
        users.set(id, user);
        return answer(res, call, 200, user);
      }
      return answer(res, call, 404, { code: "not_found", message: "no such route in the stub" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** The project URL, as `SUPABASE_URL` holds it. */
    url: `http://127.0.0.1:${port}`,
    users,
    calls,
    /** Adds a user as if it had signed up by itself. */
    addUser(user: Pick<StubUser, "id" | "email">) {
      users.set(user.id, { ...user, email_confirmed_at: null, user_metadata: {}, app_metadata: {} });
    },
    failWith(status: number, times = 1) {
      failure = { status, remaining: times };
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
