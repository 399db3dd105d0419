import { escapeHtml, htmlDocument } from "./html.ts";
import type { EmailMessage } from "./mailer.ts";

/**
 * Tells staff that an event endpoint failed for three days and was disabled, and how to bring it
 * back. Names the endpoint by its id and host only: its path may carry a token of the receiver's.
 *
 * @example
 * (Its recipient is the endpoint's notify_email, which cadence.disable_event_endpoint reads as it
 * disables it.)
 *
 * @example
 * const message = endpointDisabledEmail({ endpointId, host: "hooks.example.com", failingSince, lastError });
 */
export function endpointDisabledEmail(
  { endpointId, host, failingSince, lastError }: { endpointId: string; host: string; failingSince: string; lastError: string },
): Omit<EmailMessage, "to"> {
  const intro = `The event endpoint ${endpointId} (${host}) has failed every delivery since ${failingSince}, so Cadence disabled it. ` +
    "No event is sent to it, nor queued for it, until it is enabled again.";
  const lastAnswer = `Its last answer: ${lastError}`;
  const closing = "When the receiver works again: select cadence.enable_event_endpoint('<id>'); then replay what it missed " +
    "(cadence.replay_event, sql/recipes/replay-event.sql). public.event_delivery_log shows every delivery.";
  return {
    subject: `Cadence: event endpoint ${host} disabled`,
    text: [intro, "", lastAnswer, "", closing].join("\n"),
    html: htmlDocument([intro, lastAnswer, closing].map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`)),
  };
}
