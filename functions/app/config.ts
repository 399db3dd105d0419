import * as z from "zod";
import { ConfigError } from "./config-error.ts";
import { DEFAULT_DEADLINE_MS } from "./db/database.ts";
import { DEFAULT_ADMISSION_LIMIT, DEFAULT_ADMISSION_QUEUE_MS } from "./http/admission.ts";
import { ClientIpHeader } from "./http/client-ip.ts";
import { TrustedProxies } from "./http/trusted-proxies.ts";
import { canonicalIp } from "./ip-address.ts";
import { DEFAULT_IPV6_PREFIX } from "./rate-limit-client.ts";

/** How often an instance writes the kiosk sightings it holds (kiosk/sightings.ts): one statement at most this often. */
export const SIGHTINGS_FLUSH_MS = 5_000;

const flag = z
  .enum(["true", "false", "1", "0"], { message: "must be true or false" })
  .transform((value) => value === "true" || value === "1");

const optionalUrl = z.url({ message: "must be a URL" }).optional();

/** A URL of one of `schemes`: another scheme (`mysql://`, `http://`) is refused here, not by a driver's stack trace. */
const urlOf = (...schemes: string[]) =>
  z
    .url({
      protocol: new RegExp(`^(${schemes.join("|")})$`),
      message: `must be a ${schemes.map((scheme) => `${scheme}://`).join(" or ")} URL`,
    })
    .optional();
const postgresUrl = urlOf("postgres", "postgresql");

/** The first worker's admin port under `npm run start:workers` (functions/production/haproxy.cfg checks 9000 and up). */
export const DEFAULT_ADMIN_PORT = 9000;

/** Supabase's local database port, so `supabase start`'s connection string works as is. */
export const DEFAULT_SQL_PORT = 54322;

/** A whole number of milliseconds from `min` to `max`. */
const milliseconds = (min: number, max: number) =>
  z.coerce
    .number({ message: "must be a number of milliseconds" })
    .int({ message: "must be a number of milliseconds" })
    .min(min, { message: `must be at least ${min}` })
    .max(max, { message: `must be at most ${max}` });

/** Whether `text` is canonical base64 of `min` to `max` bytes. */
function isBase64OfBytes(text: string, min: number, max: number): boolean {
  if (text.length % 4 !== 0) return false;
  try {
    const bytes = atob(text).length;
    return bytes >= min && bytes <= max;
  } catch {
    return false;
  }
}

/**
 * The environment Cadence reads, validated once at the entry.
 * Everything below the entry receives the parsed `Config`, never the environment.
 */
export const configSchema = z
  .object({
    PORT: z.coerce.number({ message: "must be a port number" }).int().min(0).max(65535).default(8000),
    /**
     * The address the server listens on: loopback unless told, so only what runs on this machine
     * (the shipped HAProxy, a developer's browser) reaches the port. An IP address, never a name: a
     * name would resolve to whatever interface it points at (tcsh exports HOST as the machine's name).
     * `npm run start:workers` hands it to `deno serve --host` itself; deno serve runs the workers'
     * module before it binds, so a bad value still stops that start here, naming HOST.
     */
    HOST: z
      .string()
      .refine((host) => canonicalIp(host) !== undefined, {
        message: "must be an IP address to listen on: 127.0.0.1 (the default) or ::1 for this machine only, 0.0.0.0 or :: for every interface",
      })
      .default("127.0.0.1"),
    /**
     * The admin listener's port, on 127.0.0.1 only: `/live`, `/ready` and `/metrics`, as PostgREST
     * keeps them on a port of their own (admin/admin-listener.ts). Unset: `npm start` opens none;
     * `npm run start:workers` gives worker i ADMIN_PORT + i - 1, from DEFAULT_ADMIN_PORT unless set.
     * Ignored on Supabase, whose runtime checks its workers itself.
     */
    ADMIN_PORT: z.coerce.number({ message: "must be a port number" }).int().min(0).max(65535).optional(),
    /**
     * Set by `npm run start:workers` for each worker process: its number, 1 to DENO_JOBS. A worker
     * watches its standard input, the supervisor's pipe, and stops when it closes; worker 1 (or a
     * server started alone) reads the fleet's gauges for the metrics, so they are read once a machine.
     */
    WORKER: z.coerce.number({ message: "must be a worker number, at least 1" }).int().min(1, { message: "must be a worker number, at least 1" }).optional(),
    DATA_DIR: z.string().min(1).default(".data"),
    /**
     * With the local default database (no DATABASE_URL): the loopback port PostgreSQL listens on,
     * where the API and psql reach it (0 picks a free one). Unset: DEFAULT_SQL_PORT, or a free port
     * when another process holds it (db/local-postgres.ts); set, a port in use stops the start, as
     * the operator asked for that one.
     */
    SQL_PORT: z.coerce.number({ message: "must be a port number" }).int().min(0).max(65535).optional(),
    /**
     * With the local default database: the `staff` role's password, what psql sends on SQL_PORT.
     * Unset: one generated at the first start, kept in DATA_DIR/sql-password (db/local-postgres.ts).
     */
    SQL_PASSWORD: z.string().min(1).optional(),
    DATABASE_URL: postgresUrl,
    /** Set by the Supabase platform inside edge functions. */
    SUPABASE_DB_URL: postgresUrl,
    /** The most a request waits on the database (milliseconds) before it is answered without it. */
    DATABASE_DEADLINE_MS: milliseconds(100, 60_000).default(DEFAULT_DEADLINE_MS),
    /**
     * Requests one process works on at once (http/admission.ts); more wait for a turn, at most as
     * many as this, for at most ADMISSION_QUEUE_MS, and beyond either are answered 503 with Retry-After.
     */
    ADMISSION_LIMIT: z.coerce
      .number({ message: "must be a whole number of requests, at least 1" })
      .int({ message: "must be a whole number of requests, at least 1" })
      .min(1, { message: "must be a whole number of requests, at least 1" })
      .default(DEFAULT_ADMISSION_LIMIT),
    /** The longest a request waits for its turn (milliseconds) before it is answered 503 with Retry-After. */
    ADMISSION_QUEUE_MS: milliseconds(1, 10_000).default(DEFAULT_ADMISSION_QUEUE_MS),
    /** How long the catalogue is served from memory (milliseconds): how soon a catalogue edit reaches kiosks. */
    CATALOGUE_TTL_MS: milliseconds(0, 300_000).default(5_000),
    /** How often kiosk sightings are written (milliseconds): how soon kiosk_status shows a call. */
    SIGHTINGS_FLUSH_MS: milliseconds(100, 60_000).default(SIGHTINGS_FLUSH_MS),
    /**
     * The soft limit on open files (`ulimit -n`), which `npm start` raises to the hard limit and
     * sets here: Deno reads /proc/self/limits only with --allow-all. "unlimited" counts as unknown.
     */
    FILE_DESCRIPTOR_LIMIT: z
      .string()
      .regex(/^(\d+|unlimited)$/, { message: "must be a number of files (ulimit -n)" })
      .transform((value) => (value === "unlimited" ? undefined : Number(value)))
      .optional(),
    /**
     * How many worker processes `npm run start:workers` runs (functions/production/supervisor.ts);
     * unset, one per core. The name is Deno's own for `deno serve --parallel`, which the production
     * start used before each worker became a process with its own port.
     */
    DENO_JOBS: z.coerce
      .number({ message: "must be a whole number of workers, at least 1" })
      .int({ message: "must be a whole number of workers, at least 1" })
      .min(1, { message: "must be a whole number of workers, at least 1" })
      .optional(),
    SIGNING_SECRET: z.string().min(1).optional(),
    /** The onboarding secret being rotated out, accepted beside SIGNING_SECRET until it is removed. */
    SIGNING_SECRET_PREVIOUS: z.string().min(1).optional(),
    /**
     * The onboarding webhook's Standard Webhooks secret, `whsec_` and the base64 of 24 to 64 bytes,
     * as platforms (Svix and others) generate it. Its own variable: the platform makes it, and it is
     * used as decoded bytes where SIGNING_SECRET is used as text, so neither can stand for the other.
     */
    STANDARD_WEBHOOKS_SECRET: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, { message: "must be whsec_ followed by the base64 secret" })
      .refine((secret) => isBase64OfBytes(secret.slice("whsec_".length), 24, 64), {
        message: "must be whsec_ followed by the base64 of 24 to 64 bytes",
      })
      .optional(),
    TRUST_PROXY: flag.default(false),
    /** The header a trusted proxy names the client in (http/client-ip.ts); unset: TRUST_PROXY decides. */
    CLIENT_IP_HEADER: ClientIpHeader.optional(),
    /**
     * The socket peers whose client-IP header is believed (http/trusted-proxies.ts); from any other
     * peer, the peer is the client. Unset: loopback (DEFAULT_TRUSTED_PROXIES), where the shipped
     * HAProxy runs. Optional here so that a value given on the Edge Runtime can be named as ignored.
     */
    TRUSTED_PROXIES: TrustedProxies.optional(),
    /**
     * The prefix length an IPv6 client is rate limited by (rate-limit-client.ts, whose default this
     * is); 48 or 56 where providers hand each customer that much, 128 for one address.
     */
    IPV6_RATE_LIMIT_PREFIX: z.coerce
      .number({ message: "must be a prefix length from 16 to 128" })
      .int({ message: "must be a prefix length from 16 to 128" })
      .min(16, { message: "must be a prefix length from 16 to 128" })
      .max(128, { message: "must be a prefix length from 16 to 128" })
      .default(DEFAULT_IPV6_PREFIX),
    REDIS_URL: urlOf("redis", "rediss"),
    UPSTASH_REDIS_REST_URL: optionalUrl,
    UPSTASH_REDIS_REST_TOKEN: z.string().min(1).optional(),
    /** Records every check for the Upstash console's rate-limit analytics (more commands per check: README). */
    UPSTASH_RATELIMIT_ANALYTICS: flag.default(false),
    /** Refuses clients on the deny lists edited in the Upstash console (more commands per check: README). */
    UPSTASH_RATELIMIT_DENY_LISTS: flag.default(false),
    MAILER: z.enum(["console", "resend"], { message: "must be console or resend" }).default("console"),
    RESEND_API_KEY: z.string().min(1).optional(),
    /** Where the resend mailer posts; only tests point it elsewhere. */
    RESEND_API_URL: z.url().default("https://api.resend.com/emails"),
    MAIL_FROM: z.string().min(3).default("Cadence <licenses@cadence.local>"),
    /** Set by the Supabase platform inside edge functions; with the service role key, onboarding creates Auth users. */
    SUPABASE_URL: optionalUrl,
    SUPABASE_SERVICE_ROLE_KEY: z.string().min(1).optional(),
    /** The Send Email Hook's secret as the dashboard shows it: `v1,whsec_` and 32 to 88 base64 characters. */
    SEND_EMAIL_HOOK_SECRET: z
      .string()
      .regex(/^v1,whsec_[A-Za-z0-9+/=]{32,88}$/, { message: "must be v1,whsec_ followed by the base64 secret" })
      .optional(),
  })
  .superRefine((env, ctx) => {
    if (Boolean(env.UPSTASH_REDIS_REST_URL) !== Boolean(env.UPSTASH_REDIS_REST_TOKEN)) {
      ctx.addIssue({
        code: "custom",
        path: [env.UPSTASH_REDIS_REST_URL ? "UPSTASH_REDIS_REST_TOKEN" : "UPSTASH_REDIS_REST_URL"],
        message: "UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN go together",
      });
    }
    for (const option of ["UPSTASH_RATELIMIT_ANALYTICS", "UPSTASH_RATELIMIT_DENY_LISTS"] as const) {
      // Both live in the Upstash console: a plain Redis or memory has nowhere to show or edit them.
      if (env[option] && !env.UPSTASH_REDIS_REST_URL) {
        ctx.addIssue({ code: "custom", path: [option], message: "is an Upstash feature: set UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN" });
      }
    }
    if (Boolean(env.SUPABASE_URL) !== Boolean(env.SUPABASE_SERVICE_ROLE_KEY)) {
      ctx.addIssue({
        code: "custom",
        path: [env.SUPABASE_URL ? "SUPABASE_SERVICE_ROLE_KEY" : "SUPABASE_URL"],
        message: "SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY go together",
      });
    }
    if (env.CLIENT_IP_HEADER && env.TRUST_PROXY) {
      ctx.addIssue({ code: "custom", path: ["CLIENT_IP_HEADER"], message: "names the header itself: unset TRUST_PROXY" });
    }
    if (env.SIGNING_SECRET_PREVIOUS && !env.SIGNING_SECRET) {
      ctx.addIssue({ code: "custom", path: ["SIGNING_SECRET_PREVIOUS"], message: "is only accepted beside SIGNING_SECRET (the new secret)" });
    }
    if (env.MAILER === "resend" && !env.RESEND_API_KEY) {
      ctx.addIssue({ code: "custom", path: ["RESEND_API_KEY"], message: "is required when MAILER=resend" });
    }
  });

export type Config = z.infer<typeof configSchema>;

/** Thrown when the environment is unusable; the message names each bad variable. */
/**
 * Parses the environment. Empty strings count as unset, as shells and dashboards produce them.
 *
 * @example
 * const config = parseConfig({ PORT: "8001" }); // the process's own: configFromEnvironment()
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
  const result = configSchema.safeParse(present);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  throw new ConfigError(`invalid configuration\n  ${lines.join("\n  ")}`);
}
