// `npm run -s sign -- --email ada@example.com [--name "Ada"] [--url http://localhost:8000]
//   [--scheme spec|standard-webhooks] [--idempotency-key <id>] | sh`: signs an onboarding request
// with Cadence's own signing code and prints a curl command that sends it (within 300 seconds), to
// the server on this machine's PORT unless --url says where. Under the interface's own scheme
// (SIGNING_SECRET) it carries an Idempotency-Key; under Standard Webhooks
// (STANDARD_WEBHOOKS_SECRET) the webhook-id is that id. Either way a fresh UUID unless given: to retry
// a request whose answer was lost, sign it again with the same --idempotency-key and the same body.
import { configFromEnvironment } from "../app/environment.ts";
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
].join("\n");
const cli: CommandLine = commandLine(usage, 1);

const values = cli.flags({
  email: { type: "string" },
  name: { type: "string" },
  url: { type: "string" },
  scheme: { type: "string", default: "spec" },
  "idempotency-key": { type: "string" },
});
if (!values.email) cli.fail(usage);
if (values.scheme !== "spec" && values.scheme !== "standard-webhooks") cli.fail(`--scheme must be spec or standard-webhooks\n${usage}`);

const config = configFromEnvironment();

const url = values.url ?? `http://localhost:${config.PORT}`;
const body = JSON.stringify(values.name === undefined ? { email: values.email } : { email: values.email, name: values.name });
const id = values["idempotency-key"] ?? crypto.randomUUID();
if (values.scheme === "standard-webhooks") {
  const secret = config.STANDARD_WEBHOOKS_SECRET;
  if (!secret) cli.fail("STANDARD_WEBHOOKS_SECRET is not set: export the whsec_ secret shared with the server");
  console.log(curlCommand(url, signStandardWebhookRequest(secret, body, { id })));
} else {
  const secret = config.SIGNING_SECRET;
  if (!secret) cli.fail("SIGNING_SECRET is not set: export the secret shared with the server");
  console.log(curlCommand(url, await signOnboardingRequest(secret, body, { idempotencyKey: id })));
}
