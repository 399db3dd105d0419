import type { EmailMessage, Mailer } from "../../functions/app/mail/mailer.ts";

/**
 * A mailer that keeps what it sends, and fails the next `n` sends on request, as a mail API
 * outage would.
 */
export function memoryMailer() {
  const sent: EmailMessage[] = [];
  let failures = 0;
  const mailer: Mailer = {
    send(message) {
      if (failures > 0) {
        failures -= 1;
        return Promise.reject(new Error("mail API unavailable (503)"));
      }
      sent.push(message);
      return Promise.resolve();
    },
  };
  return {
    mailer,
    sent,
    failNext(count = 1) {
      failures = count;
    },
  };
}
