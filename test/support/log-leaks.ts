/** The demo seed's license keys (supabase/seed.sql). */
export const DEMO_KEYS = ["DEMO-0000-0000-0001", "DEMO-0000-0000-0002", "DEMO-0000-0000-0003", "DEMO-0000-0000-0004", "DEMO-0000-0000-0005"];

/** The demo seed's e-mail addresses, in any case. */
export const DEMO_EMAILS = ["demo@example.com", "other@example.com", "legacy@example.com"];

/** Variables whose values are secrets: none may appear in anything a server prints. */
const SECRET_VARIABLES = [
  "SIGNING_SECRET",
  "SIGNING_SECRET_PREVIOUS",
  "RESEND_API_KEY",
  "SUPABASE_SERVICE_ROLE_KEY",
  "UPSTASH_REDIS_REST_TOKEN",
  "SEND_EMAIL_HOOK_SECRET",
];

/**
 * The console mailer's deliveries (`--- e-mail to ...` to `--- end of e-mail`): the mail itself,
 * which carries its recipient and its key by design, not a log line.
 */
const CONSOLE_MAIL = /--- e-mail to [\s\S]*?--- end of e-mail/g;

/**
 * What a server's output must never hold and does: a demo key or e-mail, in any case, or the value
 * of a secret variable the server was started with. Empty when the output is clean.
 *
 * @example
 * expect(leaksIn(server.logs(), env)).toEqual([]);
 */
export function leaksIn(output: string, env: Record<string, string>): string[] {
  const text = output.replace(CONSOLE_MAIL, "").toLowerCase();
  const secrets = SECRET_VARIABLES.flatMap((name) => (env[name] ? [`${name}=${env[name]}`] : []));
  const found = [...DEMO_KEYS, ...DEMO_EMAILS].filter((value) => text.includes(value.toLowerCase()));
  for (const secret of secrets) {
    const value = secret.slice(secret.indexOf("=") + 1);
    // A secret in any part: the whole value, or the base64 of a `v1,whsec_` one.
    if (text.includes(value.toLowerCase()) || text.includes(value.replace(/^v1,whsec_/, "").toLowerCase())) {
      found.push(`the value of ${secret.slice(0, secret.indexOf("="))}`);
    }
  }
  return found;
}
