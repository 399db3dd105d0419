import * as z from "zod";
import { Email } from "../email.ts";

/** The `email_action_type` values Cadence has templates for; any other is refused with 400. */
export const ACTION_TYPES = ["signup", "invite", "magiclink", "recovery", "email_change", "reauthentication"] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

/** A payload the hook refuses (400), with the reason in words. */
export class PayloadError extends Error {
  override name = "PayloadError";
}

const isHttpUrl = (text: string) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol);

const EmailAddress = z
  .string({ message: "must be an e-mail address" })
  .refine((text) => Email.safeParse(text).success, { message: "must be an e-mail address of at most 254 characters" });
/** Auth sends every email_data field, leaving the ones that do not apply empty. */
const Text = z.string({ message: "must be a string" }).default("");

/**
 * The parts of Supabase Auth's Send Email Hook payload Cadence uses (the rest, like identities,
 * is ignored). `user.new_email` is the address an e-mail change moves to; Auth omits it otherwise.
 */
const SendEmailPayload = z.object({
  user: z.object(
    {
      id: z.string({ message: "is required" }).min(1, { message: "is required" }),
      email: EmailAddress,
      new_email: z.preprocess((value) => (value === "" ? undefined : value), EmailAddress.optional()),
      user_metadata: z.record(z.string(), z.unknown()).nullish(),
    },
    { message: "must be an object" },
  ),
  email_data: z.object(
    {
      email_action_type: z.enum(ACTION_TYPES),
      token: Text,
      token_hash: Text,
      token_new: Text,
      token_hash_new: Text,
      redirect_to: Text,
      site_url: z.string({ message: "is required" }).refine(isHttpUrl, { message: "must be an http(s) URL" }),
    },
    { message: "must be an object" },
  ),
});
export type SendEmailPayload = z.infer<typeof SendEmailPayload>;

function field(body: unknown, ...path: string[]): unknown {
  let value = body;
  for (const key of path) {
    value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/**
 * Validates a parsed hook body: first that it has `user` and `email_data`, then the action type
 * (naming the unknown one), then each field Cadence reads, naming the first that is wrong.
 *
 * @example
 * const payload = parseSendEmailPayload(JSON.parse(body)); // throws PayloadError
 */
export function parseSendEmailPayload(body: unknown): SendEmailPayload {
  const action = field(body, "email_data", "email_action_type");
  if (field(body, "user") === undefined || field(body, "email_data") === undefined) {
    throw new PayloadError("the payload must be a JSON object with user and email_data");
  }
  if (typeof action !== "string") throw new PayloadError("email_data.email_action_type: is required");
  if (!ACTION_TYPES.includes(action as ActionType)) {
    throw new PayloadError(`unknown email_action_type "${action.slice(0, 64)}": Cadence sends ${ACTION_TYPES.join(", ")}`);
  }
  const parsed = SendEmailPayload.safeParse(body);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    throw new PayloadError(`${issue.path.join(".")}: ${issue.message}`);
  }
  return parsed.data;
}
