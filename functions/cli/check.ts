// `npm run check -- --url <base_url> [--ca <file>] [--limits] [--secret <secret> --email <address>]`: tests a
// running deployment from outside, read-only unless asked, one line per check and
// `N passed, M failed` last; exits 1 when a check fails. After `supabase functions deploy api`,
// run it against https://<ref>.supabase.co/functions/v1.
import { type CommandLine, commandLine } from "./command-line.ts";
import { CheckFailed, deploymentChecks } from "./deployment-checks.ts";

const usage = [
  "usage: npm run check -- --url <base url> [--ca <certificate file>] [--limits] [--secret <signing secret> --email <address>]",
  "Tests a running deployment from outside, read-only unless asked: one line per check, exit 1 when one fails.",
  "  --url     the deployment's base URL, e.g. https://<project-ref>.supabase.co/functions/v1 (required)",
  "  --ca      trust this PEM certificate too: a self-signed proxy's (npm run -s certificate writes tls-certificate.pem)",
  "  --limits  also probe the per-IP limit with forged X-Forwarded-For (spends this IP's minute of one limit)",
  "  --secret  the deployment's SIGNING_SECRET, with --email: onboard that e-mail (creates the account)",
  "  --email   the address --secret onboards",
].join("\n");
const cli: CommandLine = commandLine(usage, 2);

const values = cli.flags({
  url: { type: "string" },
  ca: { type: "string" },
  limits: { type: "boolean", default: false },
  secret: { type: "string" },
  email: { type: "string" },
});
if (!values.url || !URL.canParse(values.url) || !/^https?:$/.test(new URL(values.url).protocol)) cli.fail(usage);
// Onboarding creates an account: only when both are given, never from one of them by mistake.
if ((values.secret === undefined) !== (values.email === undefined)) cli.fail(`--secret and --email go together (they onboard that e-mail)\n${usage}`);

if (values.limits) {
  console.error(
    "warning: --limits sends 11 license-schedule reads from this machine: it spends this IP's minute of that limit (10 a minute), so kiosks behind the same IP may get 429 on that route for up to a minute",
  );
}

/** Requests that trust `--ca` beside the usual authorities, as curl's --cacert adds one. */
let send: typeof fetch | undefined;
if (values.ca !== undefined) {
  let certificate: string;
  try {
    certificate = Deno.readTextFileSync(values.ca);
  } catch (error) {
    cli.fail(`--ca ${values.ca}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const client = Deno.createHttpClient({ caCerts: [certificate] });
  send = (input, init) => fetch(input, { ...init, client });
}

let passed = 0;
let failed = 0;
const checks = deploymentChecks({
  baseUrl: values.url,
  fetch: send,
  limits: values.limits,
  onboarding: values.secret !== undefined && values.email !== undefined ? { secret: values.secret, email: values.email } : undefined,
});
for (const check of checks) {
  try {
    console.log(`PASS ${check.name}: ${await check.run()}`);
    passed += 1;
  } catch (error) {
    if (!(error instanceof CheckFailed)) throw error;
    console.log(`FAIL ${check.name}: ${error.message}`);
    failed += 1;
  }
}
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(failed > 0 ? 1 : 0);
