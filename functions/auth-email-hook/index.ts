// The edge function `auth-email-hook`: Supabase Auth's Send Email Hook. Auth posts each account
// e-mail it would send (sign-up, invitation, magic link, recovery, e-mail change,
// reauthentication); this renders it with Cadence's templates and sends it through the same
// outbox and mailer as the license e-mails. Signed with Standard Webhooks, so no JWT is needed.
import { sendEmailHook } from "../app/auth-hook/send-email-hook.ts";
import { parseConfig } from "../app/config.ts";
import { ConfigError } from "../app/config-error.ts";
import { consoleLogger } from "../app/log.ts";
import { workerFromConfig } from "../app/worker-from-config.ts";

let config;
let handle;
try {
  config = parseConfig(Deno.env.toObject());
  if (!config.SEND_EMAIL_HOOK_SECRET) {
    throw new ConfigError("invalid configuration\n  SEND_EMAIL_HOOK_SECRET: is required by the auth-email-hook function");
  }
  handle = sendEmailHook(workerFromConfig(config, consoleLogger).ports, { secret: config.SEND_EMAIL_HOOK_SECRET });
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}

const onListen = ({ port }: { port: number }) => consoleLogger("info", "listening", { port, function: "auth-email-hook" });
Deno.serve({ port: config.PORT, onListen }, handle);
