// `npm run sign -- --email ada@example.com [--name "Ada"] [--url http://localhost:8000]`:
// signs an onboarding request with SIGNING_SECRET using Cadence's own signing code and prints a
// curl command that sends it (valid once, for 300 seconds).
import { ConfigError, parseConfig } from "../app/config.ts";
import { curlCommand, signOnboardingRequest } from "../app/onboarding/signed-request.ts";
import { type CommandLine, commandLine } from "./command-line.ts";

const usage = "usage: sign-onboarding --email <address> [--name <display name>] [--url <base url>]";
const cli: CommandLine = commandLine(usage, 1);

const values = cli.flags({
  email: { type: "string" },
  name: { type: "string" },
  url: { type: "string", default: "http://localhost:8000" },
});
if (!values.email) cli.fail(usage);

let secret: string | undefined;
try {
  secret = parseConfig(Deno.env.toObject()).SIGNING_SECRET;
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  cli.fail(error.message);
}
if (!secret) cli.fail("SIGNING_SECRET is not set: export the secret shared with the server");

const body = JSON.stringify(values.name === undefined ? { email: values.email } : { email: values.email, name: values.name });
console.log(curlCommand(values.url, await signOnboardingRequest(secret, body)));
