import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { parseDuration } from './util/duration.js';
import { trustedProxies } from './util/client-address.js';

/**
 * Every setting is an environment variable with a CLI flag twin (`SESAME_DATA_DIR` ⇔ `--data-dir`).
 * Flags win over the environment. A bad value stops start-up with a message naming the setting.
 */
export const SIGNING_ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

/** A Go-style duration (ms) that `valid` accepts, else `message`. */
const durationWhere = (valid: (ms: number) => boolean, message: string) =>
  z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined || !valid(ms)) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return ms;
  });

const duration = (name: string) => durationWhere((ms) => ms > 0, `${name} must be a positive duration such as 12h, 30m or 90s`);

const SETTINGS = {
  port: { env: 'SESAME_PORT', default: '8080', help: 'TCP port to listen on (0 = any free port)' },
  host: { env: 'SESAME_HOST', default: '0.0.0.0', help: 'address to bind' },
  issuer: { env: 'SESAME_ISSUER', default: undefined, help: 'issuer URL; default http://localhost:<port>' },
  dataDir: { env: 'SESAME_DATA_DIR', default: './data', help: 'directory of the LMDB store, master key and admin PAT (with SESAME_DATABASE_URL: of the master key file and admin PAT only)' },
  databaseUrl: { env: 'SESAME_DATABASE_URL', default: undefined, help: 'postgres:// URL (TLS: sslmode=… and the other options node-postgres takes): all state in PostgreSQL, so several nodes serve one instance; unset = LMDB in the data dir' },
  databasePoolSize: { env: 'SESAME_DATABASE_POOL_SIZE', default: '10', help: 'PostgreSQL connections the node keeps at most for transactions, shared out among its HTTP threads (at least one each); beside them each thread has two that carry single statements pipelined, and the node one that listens for the other nodes\' changes' },
  databaseConnectTimeout: { env: 'SESAME_DATABASE_CONNECT_TIMEOUT', default: '5s', help: 'how long a request waits for a PostgreSQL connection (pool full, server unreachable) before it is answered 503' },
  databaseStatementTimeout: { env: 'SESAME_DATABASE_STATEMENT_TIMEOUT', default: '10s', help: 'how long one PostgreSQL statement may run before the server cancels it (answered 503)' },
  httpThreads: { env: 'SESAME_HTTP_THREADS', default: undefined, help: 'threads accepting HTTP on the port (the main thread and acceptors beside it); default one per core' },
  workers: { env: 'SESAME_WORKERS', default: undefined, help: 'crypto worker threads for signing; default one per core (password work has as many threads of its own, at least two)' },
  signingAlg: { env: 'SESAME_SIGNING_ALG', default: 'RS256', help: 'RS256, ES256 or EdDSA' },
  signer: { env: 'SESAME_SIGNER', default: 'auto', help: 'auto, pool or inline: where JWTs are signed (auto: the pool with one HTTP thread on 2+ cores; inline on 1 core and on every thread when there are several HTTP threads)' },
  accessTokenLifetime: { env: 'SESAME_ACCESS_TOKEN_LIFETIME', default: '12h', help: 'access token lifetime' },
  idTokenLifetime: { env: 'SESAME_ID_TOKEN_LIFETIME', default: '12h', help: 'ID token lifetime' },
  refreshTokenIdleLifetime: { env: 'SESAME_REFRESH_TOKEN_IDLE_LIFETIME', default: '720h', help: 'refresh token idle expiry' },
  refreshTokenLifetime: { env: 'SESAME_REFRESH_TOKEN_LIFETIME', default: '2160h', help: 'refresh token absolute expiry' },
  refreshTokenReuseGrace: { env: 'SESAME_REFRESH_TOKEN_REUSE_GRACE', default: '0s', help: 'window (0-60s) in which a retried refresh of the just-rotated token gets the same successor instead of revoking the family; 0 = off' },
  keyRotationInterval: { env: 'SESAME_KEY_ROTATION_INTERVAL', default: '24h', help: 'how long a signing key signs before the next takes over' },
  sweepInterval: { env: 'SESAME_SWEEP_INTERVAL', default: '1m', help: 'how often expired state is swept from storage' },
  activityRetention: { env: 'SESAME_ACTIVITY_RETENTION', default: '8760h', help: 'how long the activity log keeps an event (sign-ins, administrative changes; POST /admin/v1/events/_search) before the sweep removes it; 0 = forever' },
  backchannelLogoutRetryFor: { env: 'SESAME_BACKCHANNEL_LOGOUT_RETRY_FOR', default: '24h', help: 'how long a back-channel logout an app did not accept is retried (backoff from 30s to 1h) before it is logged and dropped' },
  backchannelLogoutTimeout: { env: 'SESAME_BACKCHANNEL_LOGOUT_TIMEOUT', default: '10s', help: 'deadline (up to 60s) of one back-channel logout request, connecting to answer' },
  backchannelLogoutConcurrency: { env: 'SESAME_BACKCHANNEL_LOGOUT_CONCURRENCY', default: '16', help: 'back-channel logout requests under way at once (1-256), across all apps' },
  mailRetryFor: { env: 'SESAME_MAIL_RETRY_FOR', default: '24h', help: 'how long a mail the SMTP relay did not take is retried (backoff from 30s to 1h) before it is given up (listed at POST /admin/v1/mails/_search for a week)' },
  mailTimeout: { env: 'SESAME_MAIL_TIMEOUT', default: '10s', help: 'deadline (100ms to 60s) of each step of talking to the SMTP relay: connecting, its greeting, each command' },
  smtpTlsCaFile: { env: 'SESAME_SMTP_TLS_CA_FILE', default: undefined, help: 'PEM file of certificates trusted for the SMTP relay\'s TLS besides the system\'s (a relay with a private CA)' },
  durability: { env: 'SESAME_DURABILITY', default: 'flush', help: 'flush: a response waits until its state is synced to disk; commit: until committed (survives a process crash, not power loss)' },
  authRequestsPerAddress: { env: 'SESAME_AUTH_REQUESTS_PER_ADDRESS', default: '1000', help: 'sign-ins (authorization requests) one client address may have under way at once, 30 minutes at most each; 0 = no limit' },
  featureTokenExchange: { env: 'SESAME_FEATURE_TOKEN_EXCHANGE', default: undefined, help: 'true/false: force the token exchange feature on or off (default: as set through PUT /v2/features/instance, off)' },
  featureJwtIntrospection: { env: 'SESAME_FEATURE_JWT_INTROSPECTION', default: 'true', help: 'true/false: signed JWT introspection answers (RFC 9701) for Accept: application/token-introspection+jwt' },
  featurePar: { env: 'SESAME_FEATURE_PAR', default: 'true', help: 'true/false: pushed authorization requests (RFC 9126) at /oauth/v2/par' },
  featureResourceIndicators: { env: 'SESAME_FEATURE_RESOURCE_INDICATORS', default: 'true', help: 'true/false: the resource parameter (RFC 8707) at authorize, PAR and token; false: refused with invalid_target' },
  featureDpop: { env: 'SESAME_FEATURE_DPOP', default: 'true', help: 'true/false: DPoP sender-constrained tokens (RFC 9449); false: the DPoP header is ignored and tokens are Bearer tokens' },
  dpopRequireNonce: { env: 'SESAME_DPOP_REQUIRE_NONCE', default: 'false', help: 'true/false: DPoP proofs must carry a server nonce (DPoP-Nonce, rotated every 5 minutes); needs SESAME_FEATURE_DPOP' },
  masterKey: { env: 'SESAME_MASTERKEY', default: undefined, help: 'secret (>= 32 chars) encrypting private keys at rest; generated into the data dir when absent' },
  logLevel: { env: 'SESAME_LOG_LEVEL', default: 'info', help: 'debug, info, warn, error or silent' },
  metricsPort: { env: 'SESAME_METRICS_PORT', default: undefined, help: 'port of the Prometheus metrics listener (GET /metrics), its own port beside SESAME_PORT; unset = no metrics (0 = any free port)' },
  metricsHost: { env: 'SESAME_METRICS_HOST', default: '127.0.0.1', help: 'address the metrics listener binds; an address other than loopback needs SESAME_METRICS_TOKEN' },
  metricsToken: { env: 'SESAME_METRICS_TOKEN', default: undefined, help: 'bearer token a scraper must send to the metrics listener (at least 16 characters)' },
  trustedProxies: { env: 'SESAME_TRUSTED_PROXIES', default: undefined, help: 'comma-separated addresses or CIDR ranges of reverse proxies whose X-Forwarded-For names the client, for limits per address' },
} as const satisfies Record<string, { env: string; default: string | undefined; help: string }>;

export type SettingName = keyof typeof SETTINGS;

const schema = z.object({
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1),
  issuer: z
    .url({ protocol: /^https?$/ })
    .refine((u) => !u.includes('?') && !u.includes('#'), 'issuer must not have a query or fragment')
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  dataDir: z.string().min(1).transform((p) => resolve(p)),
  databaseUrl: z
    .string()
    .refine((url) => /^postgres(ql)?:\/\/./.test(url), 'must be a postgres:// (or postgresql://) URL')
    .optional(),
  databasePoolSize: z.coerce.number().int().min(1).max(1000),
  databaseConnectTimeout: duration('database connect timeout'),
  databaseStatementTimeout: duration('database statement timeout'),
  httpThreads: z.coerce.number().int().min(1).max(64).optional(),
  workers: z.coerce.number().int().min(1).max(64).optional(),
  signingAlg: z.enum(SIGNING_ALGS),
  signer: z.enum(['auto', 'pool', 'inline']),
  accessTokenLifetime: duration('access token lifetime'),
  idTokenLifetime: duration('ID token lifetime'),
  refreshTokenIdleLifetime: duration('refresh token idle lifetime'),
  refreshTokenLifetime: duration('refresh token lifetime'),
  refreshTokenReuseGrace: durationWhere((ms) => ms >= 0 && ms <= 60_000, 'refresh token reuse grace must be a duration from 0s to 60s'),
  keyRotationInterval: duration('key rotation interval'),
  sweepInterval: duration('sweep interval'),
  activityRetention: durationWhere((ms) => ms >= 0, 'activity retention must be a duration such as 8760h, or 0 to keep events forever'),
  backchannelLogoutRetryFor: duration('back-channel logout retry window'),
  backchannelLogoutTimeout: durationWhere((ms) => ms >= 100 && ms <= 60_000, 'back-channel logout timeout must be a duration from 100ms to 60s'),
  backchannelLogoutConcurrency: z.coerce.number().int().min(1).max(256),
  mailRetryFor: duration('mail retry window'),
  mailTimeout: durationWhere((ms) => ms >= 100 && ms <= 60_000, 'mail timeout must be a duration from 100ms to 60s'),
  smtpTlsCaFile: z.string().min(1).transform((p) => resolve(p)).optional(),
  durability: z.enum(['flush', 'commit']),
  authRequestsPerAddress: z.coerce.number().int().min(0).max(1_000_000),
  featureTokenExchange: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
  featurePar: z.enum(['true', 'false']).transform((v) => v === 'true'),
  featureResourceIndicators: z.enum(['true', 'false']).transform((v) => v === 'true'),
  featureDpop: z.enum(['true', 'false']).transform((v) => v === 'true'),
  dpopRequireNonce: z.enum(['true', 'false']).transform((v) => v === 'true'),
  featureJwtIntrospection: z.enum(['true', 'false']).transform((v) => v === 'true'),
  masterKey: z.string().min(32, 'must be at least 32 characters').optional(),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']),
  metricsPort: z.coerce.number().int().min(0).max(65535).optional(),
  metricsHost: z.string().min(1),
  metricsToken: z.string().min(16, 'must be at least 16 characters').optional(),
  trustedProxies: z
    .string()
    .optional()
    .transform((text, ctx) => {
      const entries = (text ?? '').split(',').map((e) => e.trim()).filter((e) => e.length > 0);
      try {
        trustedProxies(entries);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
      }
      return entries;
    }),
});

/**
 * Where spans go, from the standard OpenTelemetry variables (not SESAME_* settings: collectors and
 * platforms set these for every service). Tracing is on when an OTLP endpoint is set.
 */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  endpoint: string;
  protocol: 'http/protobuf' | 'http/json';
}

export type Config = Omit<z.infer<typeof schema>, 'workers' | 'httpThreads'> & { workers: number; httpThreads: number; tracing: TracingConfig | undefined };

export class ConfigError extends Error {}

function flagName(setting: string): string {
  return '--' + setting.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

/** Reads `--flag value` and `--flag=value` pairs; unknown flags are errors. */
function parseFlags(argv: readonly string[]): Partial<Record<SettingName, string>> {
  const byFlag = new Map(Object.keys(SETTINGS).map((k) => [flagName(k), k as SettingName]));
  const out: Partial<Record<SettingName, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const setting = byFlag.get(flag);
    if (!setting) throw new ConfigError(`unknown option ${flag} (see --help)`);
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined) throw new ConfigError(`option ${flag} needs a value`);
    out[setting] = value;
  }
  return out;
}

export function helpText(usage = 'npm start -- [options]'): string {
  const rows = Object.entries(SETTINGS).map(
    ([k, s]) => `  ${flagName(k).padEnd(34)} ${s.env.padEnd(36)} ${s.help}${s.default ? ` (default ${s.default})` : ''}`,
  );
  return (
    `Usage: ${usage}\n\nOptions (each also an environment variable):\n${rows.join('\n')}\n\n` +
    'Tracing: set OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) to export spans over OTLP/HTTP;\n' +
    'OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf (default) or http/json, and the other standard OTEL_* variables apply.\n'
  );
}

export function loadConfig(env: NodeJS.ProcessEnv, argv: readonly string[]): Config {
  const flags = parseFlags(argv);
  const raw: Record<string, string | undefined> = {};
  for (const [name, setting] of Object.entries(SETTINGS) as [SettingName, (typeof SETTINGS)[SettingName]][]) {
    const fromEnv = env[setting.env];
    raw[name] = flags[name] ?? (fromEnv === '' ? undefined : fromEnv) ?? setting.default;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]) as SettingName;
    const setting = SETTINGS[name];
    throw new ConfigError(
      `invalid ${setting.env} (${flagName(name)}) = ${JSON.stringify(raw[name])}: ${issue.message}`,
    );
  }
  // RSA signing is CPU-bound while the event loop mostly waits on I/O: measured on 2 cores, a second
  // worker raised RS256 client_credentials throughput by ~40%. Idle workers cost only memory.
  const workers = parsed.data.workers ?? Math.max(1, availableParallelism());
  const httpThreads = parsed.data.httpThreads ?? Math.max(1, availableParallelism());
  checkMetrics(parsed.data, raw);
  checkDatabase(parsed.data);
  if (parsed.data.dpopRequireNonce && !parsed.data.featureDpop) {
    throw new ConfigError(`${SETTINGS.dpopRequireNonce.env} (${flagName('dpopRequireNonce')}) = true needs DPoP, which ${SETTINGS.featureDpop.env} (${flagName('featureDpop')}) = false turns off`);
  }
  return { ...parsed.data, workers, httpThreads, tracing: tracingConfig(env) };
}

/** What works on LMDB only is refused on PostgreSQL, by name (rather than taken and ignored). */
function checkDatabase(settings: z.infer<typeof schema>): void {
  const named = (name: SettingName) => `${SETTINGS[name].env} (${flagName(name)})`;
  if (!settings.databaseUrl) return;
  if (settings.durability !== 'flush') {
    throw new ConfigError(`${named('durability')} = ${settings.durability} applies to LMDB only: on PostgreSQL a commit is as durable as the server's synchronous_commit makes it (see README "Running several nodes")`);
  }
}

/** Metrics are served on their own port only, and beyond loopback only to a scraper with the token. */
function checkMetrics(settings: z.infer<typeof schema>, raw: Record<string, string | undefined>): void {
  const named = (name: SettingName) => `${SETTINGS[name].env} (${flagName(name)})`;
  if (settings.metricsPort === undefined) {
    const without = settings.metricsToken !== undefined ? 'metricsToken' : raw.metricsHost !== SETTINGS.metricsHost.default ? 'metricsHost' : undefined;
    if (without) throw new ConfigError(`${named(without)} is set but ${named('metricsPort')} is not: metrics are served only on their own port; set ${SETTINGS.metricsPort.env} too`);
    return;
  }
  if (settings.metricsPort !== 0 && settings.metricsPort === settings.port) {
    throw new ConfigError(`invalid ${named('metricsPort')} = ${settings.metricsPort}: the metrics listener needs a port of its own, not ${SETTINGS.port.env}'s`);
  }
  if (!isLoopback(settings.metricsHost) && settings.metricsToken === undefined) {
    throw new ConfigError(
      `invalid ${named('metricsHost')} = ${JSON.stringify(settings.metricsHost)}: metrics on an address other than loopback need ${SETTINGS.metricsToken.env}, so that only your scraper reads them`,
    );
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Tracing from the OpenTelemetry variables (see TracingConfig); off when no endpoint is set or the SDK is disabled. */
function tracingConfig(env: NodeJS.ProcessEnv): TracingConfig | undefined {
  const set = (name: string) => (env[name] === '' ? undefined : env[name]?.trim());
  if (set('OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || set('OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none') return undefined;
  const tracesEndpoint = set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = set('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (tracesEndpoint === undefined && endpoint === undefined) return undefined;
  const variable = tracesEndpoint !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  let url: URL;
  try {
    url = new URL((tracesEndpoint ?? endpoint)!);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError(`invalid ${variable} = ${JSON.stringify(tracesEndpoint ?? endpoint)}: must be an http(s) URL (OTLP/HTTP)`);
  }
  // The signal-specific variable is the whole URL; the general one is a base the traces path goes under (OTLP exporter spec).
  const traces = tracesEndpoint !== undefined ? url.href : `${url.href.replace(/\/+$/, '')}/v1/traces`;
  const protocolVariable = set('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = set(protocolVariable) ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(`invalid ${protocolVariable} = ${JSON.stringify(protocol)}: Sesame exports traces over OTLP/HTTP, http/protobuf or http/json`);
  }
  return { endpoint: traces, protocol };
}
