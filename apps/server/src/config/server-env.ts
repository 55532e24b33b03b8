import { isIP } from "node:net";
import { isAbsolute, resolve } from "node:path";
import { DEFAULT_MAX_RUNNING_TURNS } from "@aptix/core";
import { z } from "zod";
import { LOG_LEVELS } from "../logging/log-level.js";
import { ConfigError } from "./config-error.js";
import { CorsOriginsSchema } from "./cors-origins.js";
import { didYouMean } from "./did-you-mean.js";
import { TrustedProxiesSchema } from "./trusted-proxies.js";

/** `APTIX_RATE_LIMIT_RPM`'s default: requests a minute per principal on one instance. */
export const DEFAULT_RATE_LIMIT_RPM = 600;

const GIB = 1024 ** 3;

const integer = (fallback: number, min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return z.coerce
    .number({ error: message })
    .int(message)
    .min(min, message)
    .max(max, message)
    .default(fallback);
};

/** Variables whose values are secrets (or hold one, as a database URL's password): never echoed in an error. */
const SECRET_VARIABLE = /KEY|TOKEN|SECRET|PASSWORD|DATABASE_URL/;
/** How much of a bad value an error repeats: enough to recognise it, not a pasted file. */
const ECHOED_CHARS = 40;

/** `NAME=value` for an error line, the value quoted and cut; the name alone for a secret or an unset one. */
function echoed(name: string, value: string | undefined): string {
  if (value === undefined || SECRET_VARIABLE.test(name)) return name;
  const cut = value.length > ECHOED_CHARS ? `${value.slice(0, ECHOED_CHARS)}…` : value;
  return `${name}=${JSON.stringify(cut)}`;
}

/** A retention in whole days, at least one. */
const retentionDays = z.coerce
  .number({ error: "must be a whole number of days, 1 or more" })
  .int("must be a whole number of days, 1 or more")
  .min(1, "must be a whole number of days, 1 or more")
  .max(36_500, "must be at most 36500 days");

const otlpUrl = z.url({
  protocol: /^https?$/,
  error: "must be an http(s) URL such as http://127.0.0.1:4318",
});

/**
 * The environment of docs/configuration.md, plus a few optional tunables (APTIX_*). Every variable is checked at
 * start-up; a bad one stops the service with a message naming it.
 */
const ServerEnvSchema = z.object({
  PORT: integer(8787, 0, 65_535),
  HOST: z.string().min(1).default("127.0.0.1"),
  /** `./.aptix/db` when unset, `./.aptix/demo-db` for the demo (see `readServerEnv`). */
  DATABASE_URL: z
    .string()
    .min(1)
    .optional()
    .superRefine((url, context) => {
      const problem = url === undefined ? undefined : databaseSchemeProblem(url);
      if (problem) context.addIssue({ code: "custom", message: problem });
    }),
  /** The schema of the store's tables, created if missing (store-drizzle's default: `aptix`). */
  APTIX_DATABASE_SCHEMA: z.string().min(1).optional(),
  /** Embedded PGlite only: Postgres's `shared_buffers`, e.g. `64MB` (store-drizzle's default: `16MB`). */
  APTIX_PGLITE_SHARED_BUFFERS: z
    .string()
    .regex(/^[1-9][0-9]*(kB|MB|GB)$/, "a size such as 16MB (kB, MB or GB)")
    .optional(),
  /** Runs the built-in demo model instead of the providers: a first look without a provider key. */
  APTIX_DEMO: z.enum(["0", "1", "false", "true", ""], { error: "must be 1 (on) or 0 (off)" }).optional(),
  /** The least severe log line written: at `warn`, nothing at `info` or below (start-up lines included). */
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` }).default("info"),
  APTIX_CONFIG: z.string().min(1).optional(),
  /** The default conversation context's model, over APTIX_CONFIG's (or the built-in default's). */
  APTIX_MODEL: z.string().min(1).optional(),
  /** The default conversation context's provider (checked against the server's providers when the config loads). */
  APTIX_PROVIDER: z.string().min(1).optional(),
  /** The origin (and path prefix) clients reach the service at, for FileRef urls; the listen address when unset. */
  APTIX_PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL such as https://agent.example.com/aptix" })
    .refine((url) => !/[?#]/.test(url), "must have no query or fragment")
    .optional(),
  /** The longest one server tool (built-in or MCP) may run before its turn fails with TOOL_FAILED. */
  APTIX_TOOL_TIMEOUT_MS: integer(30_000, 1, 3_600_000),
  /**
   * The longest connecting to an MCP server (start-up, handshake and tool list) may take, at start-up and when a
   * dropped connection is opened again: a stdio server started through `npx` may first have to be downloaded.
   */
  APTIX_MCP_CONNECT_TIMEOUT_MS: integer(30_000, 1, 3_600_000),
  APTIX_API_KEYS: z.string().optional(),
  /** Origins whose pages may call the service from a browser (CORS), comma-separated; none by default. */
  APTIX_CORS_ORIGINS: CorsOriginsSchema,
  /** Proxies (CIDRs) whose `X-Forwarded-For` names the client address, comma-separated; none by default. */
  APTIX_TRUSTED_PROXIES: TrustedProxiesSchema,
  /**
   * Largest request body accepted, in bytes (413 beyond, while it streams in). The contracts' default limits fit
   * inside the default, so raise it only with limits of your own.
   */
  APTIX_MAX_BODY_BYTES: integer(32 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  /** Requests a minute one principal may send to one instance before 429 RATE_LIMITED. */
  APTIX_RATE_LIMIT_RPM: integer(DEFAULT_RATE_LIMIT_RPM, 1, 1_000_000),
  /** LLM calls one request may make before its turn fails. */
  APTIX_MAX_LLM_CALLS: integer(12, 1, 200),
  /** How long a turn holds its session before another instance may take it over. */
  APTIX_LEASE_MS: integer(10 * 60_000, 1_000, 24 * 3_600_000),
  /** Turns one principal may run at once across every instance (429 RATE_LIMITED beyond). */
  APTIX_MAX_RUNNING_TURNS: integer(DEFAULT_MAX_RUNNING_TURNS, 1, 100_000),
  /** Bytes of pushed workspace documents one principal may keep (413 QUOTA_EXCEEDED beyond). */
  APTIX_QUOTA_WORKSPACE_BYTES: integer(GIB, 0, Number.MAX_SAFE_INTEGER),
  /** Bytes of produced files (create_file, MCP results) one principal may keep (the tool call fails beyond). */
  APTIX_QUOTA_FILE_BYTES: integer(GIB, 0, Number.MAX_SAFE_INTEGER),
  /**
   * USD a principal may spend a UTC month (priced calls), then new user turns and compactions are refused and a
   * running turn ends before its next round; unset: no budget.
   */
  APTIX_BUDGET_USD_MONTHLY: z.coerce
    .number({ error: "must be a number of US dollars, 0 or more" })
    .min(0, "must be a number of US dollars, 0 or more")
    .optional(),
  /** Tokens (input and output) a principal may use a UTC day, then as past the USD budget; unset: no budget. */
  APTIX_BUDGET_TOKENS_DAILY: z.coerce
    .number({ error: "must be a whole number of tokens, 0 or more" })
    .int("must be a whole number of tokens, 0 or more")
    .min(0, "must be a whole number of tokens, 0 or more")
    .optional(),
  /** How long a streamed turn's events are kept for resuming clients after the turn ends. */
  APTIX_EVENT_RETENTION_MS: integer(24 * 3_600_000, 0, 365 * 24 * 3_600_000),
  /** Sessions idle longer than this many days are deleted with everything of them; unset: kept. */
  APTIX_SESSION_RETENTION_DAYS: retentionDays.optional(),
  /** Turns' traces older than this many days lose their composed requests and raw provider payloads. */
  APTIX_TRACE_RETENTION_DAYS: retentionDays.default(30),
  /** How long shutdown waits for running turns. */
  APTIX_SHUTDOWN_TIMEOUT_MS: integer(30_000, 0, 3_600_000),
  /** How often an idle event stream gets a keep-alive comment. */
  APTIX_SSE_HEARTBEAT_MS: integer(15_000, 100, 600_000),
  APTIX_OPENAI_MAX_RETRIES: integer(2, 0, 10),
  APTIX_OPENAI_TIMEOUT_MS: integer(120_000, 1_000, 3_600_000),
  APTIX_ANTHROPIC_MAX_RETRIES: integer(2, 0, 10),
  APTIX_ANTHROPIC_TIMEOUT_MS: integer(120_000, 1_000, 3_600_000),
  /**
   * Keys each session's prompt-cache key (an HMAC of principal and session) the same on every instance; unset:
   * a random secret made once and kept in the database.
   */
  APTIX_CACHE_KEY_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  /** Lets webhooks go to loopback and private addresses (a receiver on the same host or network): off by default. */
  APTIX_WEBHOOK_ALLOW_PRIVATE: z.enum(["0", "1"], { error: "must be 1 (on) or 0 (off)" }).default("0"),
  /** Lets callers other than loopback read `GET /metrics` with `Authorization: Bearer <token>`. */
  APTIX_METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  // OpenTelemetry's standard variables (docs/operations.md, Traces): traces are exported only when they say so.
  OTEL_SDK_DISABLED: z.enum(["true", "false"], { error: "must be true or false" }).default("false"),
  OTEL_TRACES_EXPORTER: z
    .enum(["otlp", "none"], { error: "must be otlp or none (the service exports traces with OTLP only)" })
    .optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl.optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default("aptix"),
});

export type ServerEnv = Omit<z.infer<typeof ServerEnvSchema>, "DATABASE_URL"> & {
  /** Postgres's URL, `memory://`, or the embedded database's directory as an absolute path. */
  DATABASE_URL: string;
  /** Principal by API key; empty in local mode. */
  apiKeys: Map<string, string>;
  /** APTIX_DEMO is on: the demo model answers every turn. */
  demo: boolean;
  /** The environment as read: the variables `APTIX_CONFIG` names (a webhook's `secretEnv`) are looked up in it. */
  variables: Readonly<Record<string, string | undefined>>;
};

/** The schemes DATABASE_URL may start with; anything else with a scheme is a typo, not a directory to create. */
const DATABASE_SCHEMES = ["postgres", "postgresql", "memory"];

/**
 * Why DATABASE_URL names no database: a scheme other than Postgres's or `memory` (`postgress://…` would otherwise
 * be an embedded database in a folder `postgress:`), or one without its `//`. A one-letter scheme is a Windows
 * drive. The URL itself is never repeated: it may hold a password.
 */
function databaseSchemeProblem(url: string): string | undefined {
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(url)?.[1];
  if (scheme === undefined) return undefined;
  // As the store reads them: Postgres's schemes in any case, `memory://` as written.
  if (/^postgres(ql)?:\/\//i.test(url) || url.startsWith("memory://")) return undefined;
  const hint = DATABASE_SCHEMES.includes(scheme)
    ? ` (did you mean "${scheme}://"?)`
    : didYouMean(DATABASE_SCHEMES)(scheme);
  return `"${scheme}:" is not a database URL this service opens${hint}: use postgres://…, postgresql://…, memory:// or a directory path`;
}

/**
 * `APTIX_*` variables read by other programs than the service: the `aptix` terminal client's, and the CI script's
 * (which starts the service too). Any other unknown one is a typo.
 */
const OTHER_PROGRAMS_VARIABLES = new Set([
  "APTIX_URL",
  "APTIX_API_KEY",
  "APTIX_CLI_COMMAND",
  "APTIX_CI_ISOLATED",
]);

const SERVICE_VARIABLES = Object.keys(ServerEnvSchema.shape);

/**
 * `APTIX_PORT: is not a variable the service reads (did you mean "PORT"?)` for each `APTIX_*` variable no program of
 * Aptix reads: a misspelled one would otherwise be ignored without a word. A name is also compared without its
 * prefix, for the variables that have none (`PORT`, `DATABASE_URL`).
 */
function unknownVariables(env: NodeJS.ProcessEnv): string[] {
  const hint = didYouMean(SERVICE_VARIABLES);
  return Object.keys(env)
    .filter((name) => name.startsWith("APTIX_") && !SERVICE_VARIABLES.includes(name))
    .filter((name) => !OTHER_PROGRAMS_VARIABLES.has(name))
    .sort()
    .map(
      (name) =>
        `${name}: is not a variable the service reads${hint(name) || hint(name.slice("APTIX_".length))}`,
    );
}

export function readServerEnv(env: NodeJS.ProcessEnv): ServerEnv {
  const parsed = ServerEnvSchema.safeParse(env);
  const unknown = unknownVariables(env);
  if (!parsed.success || unknown.length > 0) {
    const problems = (parsed.error?.issues ?? []).map((issue) => {
      const name = issue.path.join(".");
      return `${echoed(name, env[name])}: ${issue.message}`;
    });
    throw new ConfigError("Invalid environment", [...problems, ...unknown]);
  }
  const apiKeys = parseApiKeys(parsed.data.APTIX_API_KEYS);
  if (apiKeys.size === 0 && !isLoopback(parsed.data.HOST)) {
    throw new ConfigError(
      `HOST=${parsed.data.HOST} is not a loopback address, and APTIX_API_KEYS is unset: local mode serves loopback only. Set APTIX_API_KEYS to serve other hosts.`,
    );
  }
  if (apiKeys.size === 0 && parsed.data.APTIX_TRUSTED_PROXIES.length > 0) {
    throw new ConfigError(
      "APTIX_TRUSTED_PROXIES is set, and APTIX_API_KEYS is unset: local mode refuses every forwarded request. Set APTIX_API_KEYS to serve through a proxy.",
    );
  }
  const demo = parsed.data.APTIX_DEMO === "1" || parsed.data.APTIX_DEMO === "true";
  // The demo keeps its sessions apart: a real model's start must not replay the demo's stored answers unmarked.
  const databaseUrl = parsed.data.DATABASE_URL ?? (demo ? "./.aptix/demo-db" : "./.aptix/db");
  return {
    ...parsed.data,
    DATABASE_URL: resolveDatabasePath(databaseUrl, env.INIT_CWD),
    apiKeys,
    demo,
    variables: env,
  };
}

/**
 * A PGlite directory given as a relative path means the directory the command was run from: npm and pnpm
 * run scripts in the package's folder but name the caller's folder in INIT_CWD (`pnpm start` at the root
 * keeps its database in the root's `.aptix/db`).
 */
function resolveDatabasePath(url: string, initCwd: string | undefined): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || isAbsolute(url)) return url;
  return resolve(initCwd ?? process.cwd(), url);
}

/** `principal:key,principal:key` → key → principal. */
function parseApiKeys(text: string | undefined): Map<string, string> {
  const keys = new Map<string, string>();
  for (const [index, entry] of (text ?? "").split(",").entries()) {
    if (entry.trim() === "") continue;
    const separator = entry.indexOf(":");
    const principal = entry.slice(0, separator).trim();
    const key = entry.slice(separator + 1).trim();
    if (separator <= 0 || principal === "" || key.length < 16) {
      throw new ConfigError(
        `APTIX_API_KEYS: entry ${index + 1} must be principal:key with a key of at least 16 characters`,
      );
    }
    if (keys.has(key))
      throw new ConfigError(`APTIX_API_KEYS: entry ${index + 1} repeats another entry's key`);
    keys.set(key, principal);
  }
  return keys;
}

export function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  const unbracketed = host.replace(/^\[|\]$/g, "");
  if (isIP(unbracketed) === 4) return unbracketed.startsWith("127.");
  return unbracketed === "::1" || unbracketed.startsWith("::ffff:127.");
}
