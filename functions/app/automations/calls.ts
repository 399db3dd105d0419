import type { z } from "@hono/zod-openapi";
import type { Database } from "../db/database.ts";
import { type FailureCode, failures } from "../errors.ts";
import { maskKey } from "../log.ts";
import { licenseEmail } from "../mail/license-email.ts";
import { localPart } from "../onboarding/schemas.ts";
import { type LimitRule } from "../rate-limit/limiter.ts";
import { RULES } from "../rate-limit/rules.ts";
import { AUTOMATIONS_PREFIX } from "../signatures/spec-signature.ts";
import {
  type CallType,
  ChangeEmailRequest,
  type KeyRequest,
  keyRequest,
  LifecycleResponse,
  MoveRequest,
  parseChangeEmailRequest,
  parseKeyRequest,
  parseMoveRequest,
} from "./schemas.ts";
import type { Answers } from "./store.ts";
import { licenseEmailRecipient } from "./store.ts";

/**
 * One signed lifecycle call under /api/v2/automations/: its path, its body, and the one SQL change
 * it names (cadence.lifecycle_change: `name` is that function's call name and the `npm run sign`
 * command's). The route around it (routes.ts) is the same for every call.
 */
export interface LifecycleCall<Input> {
  /** The call's name: its body's `type`, and the `npm run sign` command's. */
  name: CallType;
  path: string;
  operationId: string;
  summary: string;
  description: string;
  request: z.ZodType;
  /** Validates a parsed body's fields after its `type`, in order, each failure a 400 with its message. */
  parse(body: unknown): Input;
  /** The 200's message. */
  message: string;
  /** Whether the 200 names the account (`user_id`). */
  withUserId: boolean;
  /** Why the change may refuse (cadence.lifecycle_change's outcomes other than `done`), each a failure code. */
  refusals: readonly FailureCode[];
  /** The arguments of the SQL change; the resend renders its e-mail here (again, when the recipient changed). */
  args(db: Database, input: Input): Promise<Record<string, unknown>>;
  /** A second limit, on what the call names (the resend's per key), after the per-IP one. */
  perInput?: { rule: LimitRule; identifier(input: Input): string };
  /** What the log line may say of the input: a masked key, never an e-mail. */
  logged(input: Input): Record<string, string>;
  /** Whether the account's Supabase Auth user must follow the change (its e-mail), right after it. */
  authUserFollows?: boolean;
}

const keyArgs = (_db: Database, input: KeyRequest) => Promise.resolve({ license_key: input.license_key });
const keyLogged = (input: { license_key: string }) => ({ key: maskKey(input.license_key) });

export const SUSPEND: LifecycleCall<KeyRequest> = {
  name: "suspend",
  path: `${AUTOMATIONS_PREFIX}suspend/key`,
  operationId: "suspendKey",
  summary: "Signed call: suspend a license key (it then fails validation as a key that is not active)",
  description: [
    "Sets the key not active: POST /api/v2/license answers `license key is not active` for it from then on, and nothing else a kiosk reads changes (its schedule reads go on, as for any key that is not active).",
    "Suspending a suspended key changes nothing and answers 200 with `changed: false`. To end a key for good, suspend it: there is no separate revoke.",
  ].join(" "),
  request: keyRequest("suspend", "SuspendKeyRequest"),
  parse: parseKeyRequest,
  message: "license key suspended",
  withUserId: false,
  refusals: ["unknown_license"],
  args: keyArgs,
  logged: keyLogged,
};

export const REINSTATE: LifecycleCall<KeyRequest> = {
  name: "reinstate",
  path: `${AUTOMATIONS_PREFIX}reinstate/key`,
  operationId: "reinstateKey",
  summary: "Signed call: reinstate a suspended license key (it validates again)",
  description: "Sets the key active again. Reinstating an active key changes nothing and answers 200 with `changed: false`.",
  request: keyRequest("reinstate", "ReinstateKeyRequest"),
  parse: parseKeyRequest,
  message: "license key reinstated",
  withUserId: false,
  refusals: ["unknown_license"],
  args: keyArgs,
  logged: keyLogged,
};

export const MOVE: LifecycleCall<MoveRequest> = {
  name: "move",
  path: `${AUTOMATIONS_PREFIX}move/key`,
  operationId: "moveKey",
  summary: "Signed call: move a license key to another existing account",
  description: [
    "From then on the key belongs to the account of `account_email`: its kiosk validates with that e-mail (the old one is refused), and it is served that account's proclamations and schedule; a schedule of the key's own moves with it.",
    "The account must exist (404 `unknown_account`): a move never creates one; onboard it first. A key already in that account answers 200 with `changed: false`.",
    "409 `name_taken` when a kiosk of that account already has this kiosk's system name (regardless of case): nothing moved.",
  ].join(" "),
  request: MoveRequest,
  parse: parseMoveRequest,
  message: "license key moved",
  withUserId: true,
  refusals: ["unknown_license", "unknown_account", "name_taken"],
  args: (_db, input) => Promise.resolve({ license_key: input.license_key, email: input.account_email }),
  logged: keyLogged,
};

export const CHANGE_EMAIL: LifecycleCall<ChangeEmailRequest> = {
  name: "change-email",
  path: `${AUTOMATIONS_PREFIX}change/email`,
  operationId: "changeAccountEmail",
  summary: "Signed call: change an account's e-mail",
  description: [
    "From then on the account's kiosks validate with `new_email`, and the old e-mail is refused (`user does not exist`); keys that belonged to the account by the old e-mail alone keep belonging to it.",
    "On Supabase, the account's Auth user gets `new_email` too (right after the answer, else by the outbox pass's retries), so the old address no longer signs in.",
    "409 `email_taken` when another account has `new_email`; 409 `name_taken` when keys stored under `new_email` without an account would join it with a system name it uses. The same e-mail again answers 200 with `changed: false`.",
  ].join(" "),
  request: ChangeEmailRequest,
  parse: parseChangeEmailRequest,
  message: "account e-mail changed",
  withUserId: true,
  refusals: ["unknown_account", "email_taken", "name_taken", "new_email_invalid"],
  args: (_db, input) => Promise.resolve({ email: input.account_email, new_email: input.new_email }),
  logged: () => ({}),
  authUserFollows: true,
};

export const RESEND: LifecycleCall<KeyRequest> = {
  name: "resend",
  path: `${AUTOMATIONS_PREFIX}resend/license-email`,
  operationId: "resendLicenseEmail",
  summary: "Signed call: send a key's license e-mail again",
  description: [
    "Queues the license e-mail onboarding sent (the key and the e-mail to enter it with) to the key's account's e-mail now, through the same outbox: sent after the answer, retried if the mail service fails.",
    `At most ${RULES.resendPerKey.limit} times per key per 24 hours. 409 \`license_not_active\` for a suspended key.`,
  ].join(" "),
  request: keyRequest("resend", "ResendLicenseEmailRequest"),
  parse: parseKeyRequest,
  message: "license e-mail queued",
  withUserId: false,
  refusals: ["unknown_license", "license_not_active"],
  async args(db, input) {
    const recipient = await licenseEmailRecipient(db, input.license_key);
    // An unknown key: the change answers unknown_license before it reads a recipient.
    if (!recipient) return { license_key: input.license_key, recipient: null };
    const message = licenseEmail({ to: recipient.email, name: recipient.display_name ?? localPart(recipient.email), key: input.license_key });
    return { license_key: input.license_key, recipient: recipient.email, subject: message.subject, text: message.text, html: message.html };
  },
  perInput: { rule: RULES.resendPerKey, identifier: (input) => input.license_key },
  logged: keyLogged,
};

/** Every lifecycle call, in the order the document lists them. */
export const LIFECYCLE_CALLS = [SUSPEND, REINSTATE, MOVE, CHANGE_EMAIL, RESEND] as const;

/**
 * The 200's text with the JSON strings `"{changed}"` and `"{user_id}"` standing for what the change
 * did: one function, so the answer stored for retries (cadence.lifecycle_change_once fills it in)
 * and the one without an id are the same bytes.
 */
export function answerTemplate(call: LifecycleCall<unknown>): string {
  const answer = { success: true, message: call.message, changed: "{changed}", ...(call.withUserId ? { user_id: "{user_id}" } : {}) };
  return JSON.stringify(answer satisfies Record<keyof LifecycleResponse, unknown> | Omit<Record<keyof LifecycleResponse, unknown>, "user_id">);
}

/** `answerTemplate` filled in, exactly as cadence.lifecycle_change_once fills it in. */
export function renderAnswer(template: string, changed: boolean, accountId: string | null): string {
  return template.replaceAll('"{changed}"', String(changed)).replaceAll('"{user_id}"', accountId === null ? "null" : JSON.stringify(accountId));
}

/** Each final outcome's answer, for cadence.lifecycle_change_once: `done`'s template and each refusal's failure. */
export function answersOf(call: LifecycleCall<unknown>): Answers {
  const answers: Answers = { done: { status: 200, body: answerTemplate(call) } };
  for (const code of call.refusals) answers[code] = { status: failures[code][0], body: JSON.stringify(failures[code][1]) };
  return answers;
}
