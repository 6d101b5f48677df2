import type { ThreadMemory } from './thread-memory.js';

/** Formats bench results as a fixed-width table. Pure. */
export interface ScenarioResult {
  scenario: string;
  target: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  p999: number;
  non2xx: number;
  errors: number;
  /** Peak RSS of the server process during the scenario, in MiB (when known). */
  peakRssMiB?: number;
  /** Wall time of a scenario that measures one long operation (migrate), in seconds. */
  seconds?: number;
  /** Server CPU time (user + system, all threads) per answered request, in µs (when /proc is there). */
  cpuUsPerRequest?: number;
  /** Of that, the server's main thread's (the serial part where only it may do the work). */
  mainThreadUsPerRequest?: number;
  /** The load generator's CPU time over the window, as a share of the machine (all cores). */
  loadGeneratorShare?: number;
  /** How many HTTP threads served (Sesame). */
  httpThreads?: number;
  /** The busiest HTTP thread's share of the HTTP threads' CPU over the window (1 thread: 1). */
  busiestThreadShare?: number;
  /** What each kind of thread held at the end (Sesame with metrics on). */
  memory?: ThreadMemory;
}

const COLUMNS: { title: string; width: number; value: (r: ScenarioResult) => string }[] = [
  { title: 'scenario', width: 20, value: (r) => r.scenario },
  { title: 'target', width: 14, value: (r) => r.target },
  { title: 'req/s', width: 9, value: (r) => r.rps.toFixed(0) },
  { title: 'p50 ms', width: 7, value: (r) => r.p50.toFixed(1) },
  { title: 'p99 ms', width: 7, value: (r) => r.p99.toFixed(1) },
  { title: 'p99.9 ms', width: 8, value: (r) => r.p999.toFixed(1) },
  { title: 'non-2xx', width: 7, value: (r) => String(r.non2xx) },
  { title: 'errors', width: 6, value: (r) => String(r.errors) },
  { title: 'peak RSS MiB', width: 12, value: (r) => (r.peakRssMiB === undefined ? '-' : r.peakRssMiB.toFixed(0)) },
  { title: 'CPU µs/req', width: 10, value: (r) => (r.cpuUsPerRequest === undefined ? '-' : r.cpuUsPerRequest.toFixed(0)) },
  { title: 'main thr', width: 8, value: (r) => (r.mainThreadUsPerRequest === undefined ? '-' : r.mainThreadUsPerRequest.toFixed(0)) },
  { title: 'load gen', width: 8, value: (r) => (r.loadGeneratorShare === undefined ? '-' : `${(r.loadGeneratorShare * 100).toFixed(0)}%`) },
];

function row(cells: string[]): string {
  return cells.map((c, i) => (i < 2 ? c.padEnd(COLUMNS[i]!.width) : c.padStart(COLUMNS[i]!.width))).join('  ');
}

export function formatTable(results: readonly ScenarioResult[]): string {
  const header = row(COLUMNS.map((c) => c.title));
  const rule = '-'.repeat(header.length);
  return [header, rule, ...results.map((r) => row(COLUMNS.map((c) => c.value(r))))].join('\n');
}

export interface Ratio {
  scenario: string;
  /** The Sesame row's target name (`sesame`, or `sesame:pool` / `sesame:inline`). */
  target: string;
  ratio: number;
}

/** Sesame/peer req/s per scenario, for scenarios run against both. */
export function ratios(results: readonly ScenarioResult[], peer: string): Ratio[] {
  const out: Ratio[] = [];
  for (const mine of results.filter((r) => r.target.startsWith('sesame'))) {
    const theirs = results.find((r) => r.target === peer && r.scenario === mine.scenario);
    if (theirs && theirs.rps > 0) out.push({ scenario: mine.scenario, target: mine.target, ratio: mine.rps / theirs.rps });
  }
  return out;
}

/**
 * The ceiling a scenario is held against when the ceiling has no row of its own: JWT introspection
 * against the opaque one (the ceiling's irreducible introspection is one read, however the token looks).
 */
const CEILING_SCENARIO: Record<string, string> = { 'introspect-jwt': 'introspect-opaque' };

/**
 * One line per Sesame row: req/s of each target in the same run, Sesame's fraction of the ceiling,
 * its ratio to the peer, and the CPU each target spent per request.
 */
export function formatComparison(results: readonly ScenarioResult[], compare: readonly string[]): string {
  const mine = results.filter((r) => r.target.startsWith('sesame'));
  if (mine.length === 0) return '';
  const find = (target: string, scenario: string) =>
    results.find((r) => r.target === target && r.scenario === scenario) ??
    (target === 'ceiling' && CEILING_SCENARIO[scenario] ? results.find((r) => r.target === target && r.scenario === CEILING_SCENARIO[scenario]) : undefined);
  const multi = new Set(mine.map((r) => r.target)).size > 1;
  const header = ['scenario', ...(multi ? ['sesame'] : []), 'sesame req/s'];
  for (const c of compare) header.push(`${c} req/s`, c === 'ceiling' ? 'of ceiling' : `vs ${c}`);
  header.push(`CPU µs/req (sesame${compare.map((c) => ` / ${c}`).join('')})`);
  const lines = mine.map((r) => {
    const cells = [r.scenario, ...(multi ? [r.target] : []), r.rps.toFixed(0)];
    for (const c of compare) {
      const other = find(c, r.scenario);
      const ceilingOfOther = c === 'ceiling' && other && other.scenario !== r.scenario ? ` (${other.scenario})` : '';
      cells.push(other ? `${other.rps.toFixed(0)}${ceilingOfOther}` : '-', other && other.rps > 0 ? `${(r.rps / other.rps).toFixed(2)}${c === 'ceiling' ? '' : 'x'}` : '-');
    }
    const cpu = (row: ScenarioResult | undefined) => (row?.cpuUsPerRequest === undefined ? '-' : row.cpuUsPerRequest.toFixed(0));
    cells.push([cpu(r), ...compare.map((c) => cpu(find(c, r.scenario)))].join(' / '));
    return cells;
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) => cells.map((c, i) => (i === 0 || (multi && i === 1) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [format(header), '-'.repeat(format(header).length), ...lines.map(format)].join('\n');
}

/**
 * With `--metrics both`: per scenario (and signer), req/s with metrics on as a share of off, and the
 * CPU per request of each. The issue's budget is a cost of at most 3% (a share of 0.97 or more).
 */
export function formatMetricsCost(results: readonly ScenarioResult[]): string {
  const off = results.filter((r) => r.target.endsWith(':metrics-off'));
  const header = ['scenario', 'sesame', 'off req/s', 'on req/s', 'on/off', 'CPU µs/req (off / on)'];
  const lines = off.flatMap((r) => {
    const target = r.target.slice(0, -':metrics-off'.length);
    const on = results.find((o) => o.scenario === r.scenario && o.target === `${target}:metrics-on`);
    if (!on) return [];
    const cpu = (row: ScenarioResult) => (row.cpuUsPerRequest === undefined ? '-' : row.cpuUsPerRequest.toFixed(1));
    return [[r.scenario, target, r.rps.toFixed(0), on.rps.toFixed(0), r.rps > 0 ? (on.rps / r.rps).toFixed(3) : '-', `${cpu(r)} / ${cpu(on)}`]];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [format(header), '-'.repeat(format(header).length), ...lines.map(format)].join('\n');
}

/**
 * Scaling over HTTP threads (one Sesame per count, `--http-threads 1,2,4,8`): per scenario and per
 * count, req/s, the efficiency against the first count (req/s at N / ((N / first) × req/s at the
 * first); 1.00 is linear), CPU µs per request, and the busiest HTTP thread's share of the HTTP
 * threads' CPU (1/N when the work spreads evenly; near 100% when one thread does it all).
 */
export function formatScaling(results: readonly ScenarioResult[]): string {
  const rows = results.filter((r) => r.httpThreads !== undefined && r.seconds === undefined);
  const counts = [...new Set(rows.map((r) => r.httpThreads!))].sort((a, b) => a - b);
  const base = (target: string) => target.replace(/:t\d+$/, '');
  const keys = [...new Set(rows.map((r) => `${r.scenario}\u0000${base(r.target)}`))];
  const cell = (text: string) => text.padStart(26);
  const lines = [`${'scaling'.padEnd(20)}  ${'target'.padEnd(14)}  ${counts.map((n) => cell(`${n} thr: req/s  eff  µs  max`)).join('  ')}`, '-'.repeat(38 + counts.length * 28)];
  for (const key of keys) {
    const [scenario, target] = key.split('\u0000') as [string, string];
    const of = (n: number) => rows.find((r) => r.scenario === scenario && base(r.target) === target && r.httpThreads === n);
    const first = of(counts[0]!);
    const cells = counts.map((n) => {
      const r = of(n);
      if (!r) return cell('-');
      const efficiency = first && first.rps > 0 ? r.rps / ((n / counts[0]!) * first.rps) : undefined;
      const cpu = r.cpuUsPerRequest === undefined ? '-' : r.cpuUsPerRequest.toFixed(0);
      const busiest = r.busiestThreadShare === undefined ? '-' : `${(r.busiestThreadShare * 100).toFixed(0)}%`;
      return cell(`${r.rps.toFixed(0)}  ${efficiency === undefined ? '-' : efficiency.toFixed(2)}  ${cpu}  ${busiest}`);
    });
    lines.push(`${scenario.padEnd(20)}  ${target.padEnd(14)}  ${cells.join('  ')}`);
  }
  return lines.join('\n');
}

/**
 * What the issue on PostgreSQL asks of one node (2 cores, the database on the same machine), as a
 * share of the same scenario on LMDB in the same run.
 */
const POSTGRES_TARGETS: readonly [prefix: string, share: number][] = [
  ['introspect-opaque', 0.8],
  ['introspect-jwt', 0.8],
  ['cc-jwt', 0.8],
  ['cc-opaque', 0.4],
  ['code-flow', 0.4],
  ['refresh', 0.4],
  ['revoke', 0.4],
];

/**
 * With `--database-url`: per scenario, req/s on LMDB and on PostgreSQL (each Sesame row's
 * `:postgres` twin), the share, and the target where the issue sets one.
 */
export function formatStoreShare(results: readonly ScenarioResult[]): string {
  const onPostgres = results.filter((r) => /:postgres(:\d+-nodes)?$/.test(r.target));
  const header = ['scenario', 'postgres', 'LMDB req/s', 'PostgreSQL req/s', 'share', 'target', 'p99 ms (LMDB / PG)'];
  const lines = onPostgres.flatMap((r) => {
    const base = r.target.replace(/:postgres(:\d+-nodes)?$/, '');
    const lmdb = results.find((o) => o.scenario === r.scenario && o.target === base);
    if (!lmdb) return [];
    const share = lmdb.rps > 0 ? r.rps / lmdb.rps : undefined;
    const target = POSTGRES_TARGETS.find(([prefix]) => r.scenario === prefix || r.scenario.startsWith(`${prefix}-`))?.[1];
    const verdict = target === undefined || share === undefined ? '-' : `≥ ${target.toFixed(1)} ${share >= target ? 'met' : 'NOT met'}`;
    return [[r.scenario, r.target, lmdb.rps.toFixed(0), r.rps.toFixed(0), share === undefined ? '-' : share.toFixed(2), verdict, `${lmdb.p99} / ${r.p99}`]];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [format(header), '-'.repeat(format(header).length), ...lines.map(format)].join('\n');
}
