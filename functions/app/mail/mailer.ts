/** One e-mail, with a plain-text and an HTML body rendered from one template. */
export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /**
   * Stable across retries of one e-mail, so a provider that deduplicates (Resend keeps keys for
   * 24 hours) sends it once even when an earlier attempt succeeded but was not recorded.
   */
  idempotencyKey?: string;
}

/** The mailer port: resolves once the e-mail is accepted for delivery, throws otherwise. */
export interface Mailer {
  send(message: EmailMessage): Promise<void>;
}
