// The edge function `auth-email-hook`: Supabase Auth's Send Email Hook. Auth posts each account
// e-mail it would send (sign-up, invitation, magic link, recovery, e-mail change,
// reauthentication); this renders it with Cadence's templates and sends it through the same
// outbox and mailer as the license e-mails. Signed with Standard Webhooks, so no JWT is needed.
import { sendEmailHook } from "../app/auth-hook/send-email-hook.ts";
import { ConfigError } from "../app/config-error.ts";
import { configFromEnvironment } from "../app/environment.ts";
import { consoleLogger } from "../app/log.ts";
import { orExitOnOperatorError } from "../app/operator-error.ts";
import { workerFromConfig } from "../app/worker-from-config.ts";

const config = configFromEnvironment();
const handle = orExitOnOperatorError(() => {
  if (!config.SEND_EMAIL_HOOK_SECRET) {
    throw new ConfigError("invalid configuration\n  SEND_EMAIL_HOOK_SECRET: is required by the auth-email-hook function");
  }
  return sendEmailHook(workerFromConfig(config, consoleLogger).ports, { secret: config.SEND_EMAIL_HOOK_SECRET });
});

const onListen = ({ port }: { port: number }) => consoleLogger("info", "listening", { port, function: "auth-email-hook" });
Deno.serve({ port: config.PORT, onListen }, handle);
