import type { Config } from "../config.ts";
import { ConfigError } from "../config-error.ts";
import { consoleMailer } from "./console-mailer.ts";
import type { Mailer } from "./mailer.ts";
import { resendMailer } from "./resend-mailer.ts";

/**
 * The mailer `MAILER` names: `console` (the default) prints each e-mail, `resend` sends it through
 * Resend's HTTP API with `RESEND_API_KEY`, from `MAIL_FROM`.
 */
export function mailerFromConfig(config: Config): Mailer {
  if (config.MAILER === "console") return consoleMailer();
  if (!config.RESEND_API_KEY) throw new ConfigError("RESEND_API_KEY: is required when MAILER=resend");
  return resendMailer({ apiKey: config.RESEND_API_KEY, from: config.MAIL_FROM, url: config.RESEND_API_URL });
}
