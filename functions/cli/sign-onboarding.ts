// `npm run -s sign -- --email ada@example.com [--name "Ada"] [--url http://localhost:8000]
//   [--scheme spec|standard-webhooks] [--idempotency-key <id>] | sh`: signs an onboarding request
// with Cadence's own signing code and prints a curl command that sends it (within 300 seconds), to
// the server on this machine's PORT unless --url says where. Under the interface's own scheme
// (SIGNING_SECRET) it carries an Idempotency-Key; under Standard Webhooks
// (STANDARD_WEBHOOKS_SECRET) the webhook-id is that id. Either way a fresh UUID unless given: to retry
// a request whose answer was lost, sign it again with the same --idempotency-key and the same body.
// `npm run -s sign -- <call> --key <key> ...` signs a lifecycle call the same way (suspend,
// reinstate, move --email, change-email --email --new-email, resend: functions/app/automations/calls.ts).
import { configFromEnvironment } from "../app/environment.ts";
import { LIFECYCLE_CALLS } from "../app/automations/calls.ts";
import { ONBOARDING_PATH } from "../app/signatures/spec-signature.ts";
import { signOnboardingRequest, signStandardWebhookRequest } from "../app/signatures/signed-request.ts";
import { curlCommand } from "./curl-command.ts";
import { type CommandLine, commandLine } from "./command-line.ts";

const usage = [
  "usage: npm run -s sign -- --email <address> [--name <display name>] [--url <base url>]",
  "  [--scheme spec|standard-webhooks] [--idempotency-key <id>]",
  "Prints a curl command that sends a signed onboarding request; pipe it to sh to send it.",
  "  --email            the new account's e-mail address (required)",
  "  --name             its display name",
  "  --url              the server's base URL (default http://localhost:$PORT, PORT's default 8000)",
  "  --scheme           spec: x-signature with SIGNING_SECRET (default); standard-webhooks: webhook-signature with STANDARD_WEBHOOKS_SECRET",
  "  --idempotency-key  the request's id (default a new UUID); sign again with the same id and body to retry",
  "Lifecycle calls, signed and sent the same way (--url, --scheme and --idempotency-key as above):",
  "  npm run -s sign -- suspend --key <license key>",
  "  npm run -s sign -- reinstate --key <license key>",
  "  npm run -s sign -- move --key <license key> --email <the account's e-mail it moves to>",
  "  npm run -s sign -- change-email --email <the account's e-mail> --new-email <its new e-mail>",
  "  npm run -s sign -- resend --key <license key>",
].join("\n");
const cli: CommandLine = commandLine(usage, 1);

const callName = Deno.args[0] !== undefined && !Deno.args[0].startsWith("-") ? Deno.args[0] : undefined;
const call = callName === undefined ? undefined : LIFECYCLE_CALLS.find((candidate) => candidate.name === callName);
if (callName !== undefined && call === undefined) cli.fail(`Unknown call '${callName}'\n${usage}`);

const values = cli.flags(
  {
    email: { type: "string" },
    name: { type: "string" },
    key: { type: "string" },
    "new-email": { type: "string" },
    url: { type: "string" },
    scheme: { type: "string", default: "spec" },
    "idempotency-key": { type: "string" },
  },
  call ? Deno.args.slice(1) : Deno.args,
);
if (values.scheme !== "spec" && values.scheme !== "standard-webhooks") cli.fail(`--scheme must be spec or standard-webhooks\n${usage}`);

/** The body to sign, from the flags the call needs: each missing one named. */
function bodyOf(): string {
  const need = (flag: "email" | "key" | "new-email") => values[flag] ?? cli.fail(`--${flag} is required${call ? ` for ${call.name}` : ""}\n${usage}`);
  if (!call) {
    if (!values.email) cli.fail(usage);
    return JSON.stringify(values.name === undefined ? { email: values.email } : { email: values.email, name: values.name });
  }
  switch (call.name) {
    case "move":
      return JSON.stringify({ type: call.name, license_key: need("key"), account_email: need("email") });
    case "change-email":
      return JSON.stringify({ type: call.name, account_email: need("email"), new_email: need("new-email") });
    default:
      return JSON.stringify({ type: call.name, license_key: need("key") });
  }
}

const body = bodyOf();
const path = call?.path ?? ONBOARDING_PATH;
const config = configFromEnvironment();

const url = values.url ?? `http://localhost:${config.PORT}`;
const id = values["idempotency-key"] ?? crypto.randomUUID();
if (values.scheme === "standard-webhooks") {
  const secret = config.STANDARD_WEBHOOKS_SECRET;
  if (!secret) cli.fail("STANDARD_WEBHOOKS_SECRET is not set: export the whsec_ secret shared with the server");
  console.log(curlCommand(url, signStandardWebhookRequest(secret, body, { id }), path));
} else {
  const secret = config.SIGNING_SECRET;
  if (!secret) cli.fail("SIGNING_SECRET is not set: export the secret shared with the server");
  console.log(curlCommand(url, await signOnboardingRequest(secret, body, { idempotencyKey: id, path }), path));
}
