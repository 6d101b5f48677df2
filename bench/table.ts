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

export function formatRatios(list: readonly Ratio[], peer: string): string {
  if (list.length === 0) return '';
  return [
    `Sesame / ${peer} (req/s):`,
    ...list.map((r) => `  ${r.scenario.padEnd(20)} ${r.target === 'sesame' ? '' : `${r.target.padEnd(14)} `}${r.ratio.toFixed(2)}x`),
  ].join('\n');
}
