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

/**
 * The one table of settings: the environment variable, its default, the line `--help` prints, and
 * for the configuration reference (docs/configuration.md, generated from this table by
 * `npm run docs:config` and checked in CI) the default as shown and the full meaning in markdown.
 */
export const SETTINGS = {
  port: { env: 'SESAME_PORT', default: '8080', help: 'TCP port to listen on (0 = any free port)', shown: '`8080`', doc: 'TCP port (`0` = any free port)' },
  host: { env: 'SESAME_HOST', default: '0.0.0.0', help: 'address to bind', shown: '`0.0.0.0`', doc: 'address to bind' },
  issuer: {
    env: 'SESAME_ISSUER',
    default: undefined,
    help: 'issuer URL; default http://localhost:<port>',
    shown: '`http://localhost:<port>`',
    doc: 'issuer URL; its host is the instance domain (org domains are `<org>.<host>`)',
  },
  dataDir: {
    env: 'SESAME_DATA_DIR',
    default: './data',
    help: 'directory of the LMDB store, master key and admin PAT (with SESAME_DATABASE_URL: of the master key file and admin PAT only)',
    shown: '`./data`',
    doc: 'LMDB store, generated master key, `admin.pat` (with `SESAME_DATABASE_URL`: the master key file and `admin.pat` only)',
  },
  databaseUrl: {
    env: 'SESAME_DATABASE_URL',
    default: undefined,
    help: 'postgres:// URL (TLS: sslmode=… and the other options node-postgres takes): all state in PostgreSQL, so several nodes serve one instance; unset = LMDB in the data dir',
    shown: 'unset (LMDB)',
    doc: '`postgres://` URL: all state in PostgreSQL, so several nodes serve one instance (see [Running several nodes](multi-node.md)); TLS and other options as node-postgres takes them (`?sslmode=require`)',
  },
  databasePoolSize: {
    env: 'SESAME_DATABASE_POOL_SIZE',
    default: '10',
    help: "PostgreSQL connections the node keeps at most for transactions, shared out among its HTTP threads (at least one each); beside them each thread has two that carry single statements pipelined, and the node one that listens for the other nodes' changes",
    shown: '`10`',
    doc: 'PostgreSQL connections the node keeps for transactions, shared out among its HTTP threads, at least one each (beside them each thread has two that carry single statements pipelined, and the node one that listens)',
  },
  databaseConnectTimeout: {
    env: 'SESAME_DATABASE_CONNECT_TIMEOUT',
    default: '5s',
    help: 'how long a request waits for a PostgreSQL connection (pool full, server unreachable) before it is answered 503',
    shown: '`5s`',
    doc: 'how long a request waits for a PostgreSQL connection before it is answered 503',
  },
  databaseStatementTimeout: {
    env: 'SESAME_DATABASE_STATEMENT_TIMEOUT',
    default: '10s',
    help: 'how long one PostgreSQL statement may run before the server cancels it (answered 503)',
    shown: '`10s`',
    doc: 'how long one statement may run before PostgreSQL cancels it (503)',
  },
  httpThreads: {
    env: 'SESAME_HTTP_THREADS',
    default: undefined,
    help: 'threads accepting HTTP on the port (the main thread and acceptors beside it); default one per core',
    shown: 'one per core',
    doc: "threads accepting HTTP on the port: the main thread and acceptor threads beside it, which serve every OAuth/OIDC flow themselves (token endpoint, authorize, PAR, device, end_session, introspection, userinfo, revocation, discovery, JWKS) the login pages, dynamic client registration, the management and admin APIs (a signing key rotation included) and the import (each write decided in the store); they ask the main thread's password pool to hash and verify (see [Threads](architecture.md#threads)); `1` serves everything on the main thread. Each acceptor thread adds about 27 MB of memory at start (its own V8 heap), plus its copy of the directory (loaded at start, then kept current from the directory's change feed)",
  },
  workers: {
    env: 'SESAME_WORKERS',
    default: undefined,
    help: 'crypto worker threads for signing; default one per core (password work has as many threads of its own, at least two)',
    shown: 'one per core',
    doc: 'crypto worker threads (piscina) for JWT signing and assertion checks; password hashing and verification run on as many threads of their own (two at least), so sign-in attempts never delay token signing, and checks of costly imported hashes keep to all of them but one, so they never delay an ordinary sign-in. Each thread starts when work first needs it and then stays',
  },
  signingAlg: {
    env: 'SESAME_SIGNING_ALG',
    default: 'RS256',
    help: 'RS256, ES256 or EdDSA',
    shown: '`RS256`',
    doc: '`RS256`, `ES256` or `EdDSA`; changing it rotates to a key of the new algorithm at start',
  },
  signer: {
    env: 'SESAME_SIGNER',
    default: 'auto',
    help: 'auto, pool or inline: where JWTs are signed (auto: the pool with one HTTP thread on 2+ cores; inline on 1 core and on every thread when there are several HTTP threads)',
    shown: '`auto`',
    doc: "where JWTs are signed: `pool` (worker threads, batched), `inline` (event loop), or `auto`: with one HTTP thread the pool on 2 or more cores, inline on one (measured: the batched pool wins for RS256, ES256 and EdDSA); with several HTTP threads every thread signs and checks signatures itself (the pool would make the main thread the busiest: refresh on 2 threads, 72% of the HTTP threads' CPU on it). With `pool` and several HTTP threads, acceptor threads hand the code, refresh, exchange and JWT profile grants and authorize to the main thread",
  },
  accessTokenLifetime: { env: 'SESAME_ACCESS_TOKEN_LIFETIME', default: '12h', help: 'access token lifetime', shown: '`12h`', doc: 'access token lifetime (Go duration: `90s`, `30m`, `1h30m`)' },
  idTokenLifetime: { env: 'SESAME_ID_TOKEN_LIFETIME', default: '12h', help: 'ID token lifetime', shown: '`12h`', doc: 'ID token lifetime' },
  refreshTokenIdleLifetime: { env: 'SESAME_REFRESH_TOKEN_IDLE_LIFETIME', default: '720h', help: 'refresh token idle expiry', shown: '`720h`', doc: 'refresh token idle expiry' },
  refreshTokenLifetime: { env: 'SESAME_REFRESH_TOKEN_LIFETIME', default: '2160h', help: 'refresh token absolute expiry', shown: '`2160h`', doc: 'refresh token absolute expiry' },
  refreshTokenReuseGrace: {
    env: 'SESAME_REFRESH_TOKEN_REUSE_GRACE',
    default: '0s',
    help: 'window (0-60s) in which a retried refresh of the just-rotated token gets the same successor instead of revoking the family; 0 = off',
    shown: '`0s` (off)',
    doc: 'up to `60s`: a retried refresh of the just-rotated token gets the same successor instead of revoking the family (for clients whose network retries race)',
  },
  keyRotationInterval: {
    env: 'SESAME_KEY_ROTATION_INTERVAL',
    default: '24h',
    help: 'how long a signing key signs before the next takes over',
    shown: '`24h`',
    doc: 'how long a signing key signs before the next one takes over',
  },
  sweepInterval: { env: 'SESAME_SWEEP_INTERVAL', default: '1m', help: 'how often expired state is swept from storage', shown: '`1m`', doc: 'how often expired tokens are swept from storage' },
  activityRetention: {
    env: 'SESAME_ACTIVITY_RETENTION',
    default: '8760h',
    help: 'how long the activity log keeps an event (sign-ins, administrative changes; POST /admin/v1/events/_search) before the sweep removes it; 0 = forever',
    shown: '`8760h`',
    doc: 'how long the activity log keeps an event before the sweep removes it; `0` = forever',
  },
  backchannelLogoutRetryFor: {
    env: 'SESAME_BACKCHANNEL_LOGOUT_RETRY_FOR',
    default: '24h',
    help: 'how long a back-channel logout an app did not accept is retried (backoff from 30s to 1h) before it is logged and dropped',
    shown: '`24h`',
    doc: 'how long a back-channel logout the app did not accept is retried (backoff from 30 s to 1 h) before it is logged and dropped',
  },
  backchannelLogoutTimeout: {
    env: 'SESAME_BACKCHANNEL_LOGOUT_TIMEOUT',
    default: '10s',
    help: 'deadline (up to 60s) of one back-channel logout request, connecting to answer',
    shown: '`10s`',
    doc: 'deadline (100 ms to 60 s) of one back-channel logout request, connecting to answer',
  },
  backchannelLogoutConcurrency: {
    env: 'SESAME_BACKCHANNEL_LOGOUT_CONCURRENCY',
    default: '16',
    help: 'back-channel logout requests under way at once (1-256), across all apps',
    shown: '`16`',
    doc: 'back-channel logout requests under way at once (1-256), across all apps',
  },
  mailRetryFor: {
    env: 'SESAME_MAIL_RETRY_FOR',
    default: '24h',
    help: 'how long a mail the SMTP relay did not take is retried (backoff from 30s to 1h) before it is given up (listed at POST /admin/v1/mails/_search for a week)',
    shown: '`24h`',
    doc: 'how long a mail the SMTP relay did not take is retried (backoff from 30s to 1h) before it is given up (listed at `POST /admin/v1/mails/_search` for a week)',
  },
  mailTimeout: {
    env: 'SESAME_MAIL_TIMEOUT',
    default: '10s',
    help: 'deadline (100ms to 60s) of each step of talking to the SMTP relay: connecting, its greeting, each command',
    shown: '`10s`',
    doc: 'deadline (100ms to 60s) of each step of talking to the SMTP relay: connecting, its greeting, each command',
  },
  smtpTlsCaFile: {
    env: 'SESAME_SMTP_TLS_CA_FILE',
    default: undefined,
    help: "PEM file of certificates trusted for the SMTP relay's TLS besides the system's (a relay with a private CA)",
    shown: 'unset',
    doc: "PEM file of certificates trusted for the SMTP relay's TLS besides the system's (a relay with a private CA)",
  },
  durability: {
    env: 'SESAME_DURABILITY',
    default: 'flush',
    help: 'flush: a response waits until its state is synced to disk; commit: until committed (survives a process crash, not power loss)',
    shown: '`flush`',
    doc: '`flush`: a response that hands out or revokes state waits until it is synced to disk (survives power loss); `commit`: until committed (survives a process crash)',
  },
  authRequestsPerAddress: {
    env: 'SESAME_AUTH_REQUESTS_PER_ADDRESS',
    default: '1000',
    help: 'sign-ins (authorization requests) one client address may have under way at once, 30 minutes at most each; 0 = no limit',
    shown: '`1000`',
    doc: "sign-ins one client address (an IPv6 address by its /64; see `SESAME_TRUSTED_PROXIES`) keeps under way: each authorization request that goes to the login pages is stored for up to 30 minutes, so one address may not fill memory and disk with them. A new one beyond the bound takes the place of that address's oldest (whose browser then starts again) rather than being refused, so a burst from an address many people share cannot lock them out; finished and expired sign-ins free their place. `0` = no limit",
  },
  featureTokenExchange: {
    env: 'SESAME_FEATURE_TOKEN_EXCHANGE',
    default: undefined,
    help: 'true/false: force the token exchange feature on or off (default: as set through PUT /v2/features/instance, off)',
    shown: 'unset',
    doc: '`true`/`false` forces the token exchange feature; unset: as set through `PUT /v2/features/instance` (default off)',
  },
  featureJwtIntrospection: {
    env: 'SESAME_FEATURE_JWT_INTROSPECTION',
    default: 'true',
    help: 'true/false: signed JWT introspection answers (RFC 9701) for Accept: application/token-introspection+jwt',
    shown: '`true`',
    doc: 'signed JWT introspection answers (RFC 9701) to `Accept: application/token-introspection+jwt`; `false`: JSON whatever is asked, `introspection_signing_alg_values_supported` not in discovery',
  },
  featurePar: {
    env: 'SESAME_FEATURE_PAR',
    default: 'true',
    help: 'true/false: pushed authorization requests (RFC 9126) at /oauth/v2/par',
    shown: '`true`',
    doc: 'pushed authorization requests (RFC 9126) at `/oauth/v2/par`; `false`: not served, not in discovery, `request_uri` refused at the authorization endpoint',
  },
  featureResourceIndicators: {
    env: 'SESAME_FEATURE_RESOURCE_INDICATORS',
    default: 'true',
    help: 'true/false: the resource parameter (RFC 8707) at authorize, PAR and token; false: refused with invalid_target',
    shown: '`true`',
    doc: 'the `resource` parameter (RFC 8707) at the authorization, PAR, device authorization and token endpoints; `false`: `resource` refused with `invalid_target`',
  },
  featureDpop: {
    env: 'SESAME_FEATURE_DPOP',
    default: 'true',
    help: 'true/false: DPoP sender-constrained tokens (RFC 9449); false: the DPoP header is ignored and tokens are Bearer tokens',
    shown: '`true`',
    doc: 'DPoP sender-constrained tokens (RFC 9449, see [DPoP](dpop.md)); `false`: the `DPoP` header is ignored and tokens are Bearer tokens, `dpop_signing_alg_values_supported` not in discovery',
  },
  dpopRequireNonce: {
    env: 'SESAME_DPOP_REQUIRE_NONCE',
    default: 'false',
    help: 'true/false: DPoP proofs must carry a server nonce (DPoP-Nonce, rotated every 5 minutes); needs SESAME_FEATURE_DPOP',
    shown: '`false`',
    doc: 'DPoP proofs must carry the server nonce (`DPoP-Nonce`, rotated every 5 minutes, the previous one still accepted); needs `SESAME_FEATURE_DPOP`',
  },
  masterKey: {
    env: 'SESAME_MASTERKEY',
    default: undefined,
    help: 'secret (>= 32 chars) encrypting private keys at rest; generated into the data dir when absent',
    shown: 'generated into `<data dir>/masterkey`',
    doc: 'secret (≥ 32 chars) that encrypts private keys at rest; a data dir refuses a different one',
  },
  logLevel: { env: 'SESAME_LOG_LEVEL', default: 'info', help: 'debug, info, warn, error or silent', shown: '`info`', doc: '`debug`, `info`, `warn`, `error`, `silent` (JSON lines on stderr)' },
  metricsPort: {
    env: 'SESAME_METRICS_PORT',
    default: undefined,
    help: 'port of the Prometheus metrics listener (GET /metrics), its own port beside SESAME_PORT; unset = no metrics (0 = any free port)',
    shown: 'unset (no metrics)',
    doc: 'port of the Prometheus metrics listener, `GET /metrics`, beside the public port (`0` = any free port; it must differ from `SESAME_PORT`); see [Metrics and tracing](production.md#metrics-and-tracing)',
  },
  metricsHost: {
    env: 'SESAME_METRICS_HOST',
    default: '127.0.0.1',
    help: 'address the metrics listener binds; an address other than loopback needs SESAME_METRICS_TOKEN',
    shown: '`127.0.0.1`',
    doc: 'address the metrics listener binds; an address other than loopback needs `SESAME_METRICS_TOKEN`',
  },
  metricsToken: {
    env: 'SESAME_METRICS_TOKEN',
    default: undefined,
    help: 'bearer token a scraper must send to the metrics listener (at least 16 characters)',
    shown: 'unset',
    doc: 'bearer token (≥ 16 chars) a scraper must send to the metrics listener',
  },
  trustedProxies: {
    env: 'SESAME_TRUSTED_PROXIES',
    default: undefined,
    help: 'comma-separated addresses or CIDR ranges of reverse proxies whose X-Forwarded-For names the client, for limits per address',
    shown: 'unset',
    doc: "comma-separated addresses or CIDR ranges (`10.0.0.0/8, ::1`) of your reverse proxies: on a connection from one of them, limits per client address (wrong device codes, sign-ins under way, open registrations) count the right-most `X-Forwarded-For` entry that is not a listed proxy; entries left of it, written by the client, are not believed; repeated header lines are read as one list, and a port on an entry (`1.2.3.4:5678`, `[2001:db8::1]:443`) is dropped. Unset: the connection's address counts, and `X-Forwarded-For` is ignored",
  },
} as const satisfies Record<string, { env: string; default: string | undefined; help: string; shown: string; doc: string }>;

export type SettingName = keyof typeof SETTINGS;

const schema = z.object({
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1),
  issuer: z
    .url({ protocol: /^https?$/ })
    .refine((u) => !u.includes('?') && !u.includes('#'), 'issuer must not have a query or fragment')
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  dataDir: z
    .string()
    .min(1)
    .transform((p) => resolve(p)),
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
  smtpTlsCaFile: z
    .string()
    .min(1)
    .transform((p) => resolve(p))
    .optional(),
  durability: z.enum(['flush', 'commit']),
  authRequestsPerAddress: z.coerce.number().int().min(0).max(1_000_000),
  featureTokenExchange: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
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
      const entries = (text ?? '')
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e.length > 0);
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

// The schema has a rule for exactly the settings of the table: a setting without one, or a rule
// without a setting, does not compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
true satisfies Same<keyof z.input<typeof schema>, SettingName>;

export function flagName(setting: string): string {
  return `--${setting.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
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
  const rows = Object.entries(SETTINGS).map(([k, s]) => `  ${flagName(k).padEnd(34)} ${s.env.padEnd(36)} ${s.help}${s.default ? ` (default ${s.default})` : ''}`);
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
    throw new ConfigError(`invalid ${setting.env} (${flagName(name)}) = ${JSON.stringify(raw[name])}: ${issue.message}`);
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
    throw new ConfigError(
      `${named('durability')} = ${settings.durability} applies to LMDB only: on PostgreSQL a commit is as durable as the server's synchronous_commit makes it (see docs/multi-node.md)`,
    );
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
