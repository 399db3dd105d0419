import type { Mailer } from "./mailer.ts";

/**
 * Delivers e-mails to standard output: recipient, subject and the text body (which holds any
 * license key). The default for local use; this is delivery, not logging, so it prints the body.
 *
 * @example
 * const mailer = consoleMailer();
 * await mailer.send({ to: "ada@example.com", subject: "Hello", text: "Hi", html: "<p>Hi</p>" });
 */
export function consoleMailer(write: (text: string) => void = console.log): Mailer {
  return {
    send(message) {
      write(`--- e-mail to ${message.to}\nSubject: ${message.subject}\n\n${message.text}\n--- end of e-mail`);
      return Promise.resolve();
    },
  };
}
