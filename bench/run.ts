import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { BenchArgsError, HELP, parseBenchArgs, type BenchOptions } from './args.js';
import { cpuWindow } from './cpu.js';
import { loadThreadCount, sendLoad } from './load.js';
import { rssBreakdown, sampleRss, type Rss } from './rss.js';
import { formatThreadMemory, scrapeThreadMemory } from './thread-memory.js';
import { selectScenarios } from './scenarios/index.js';
import type { RequestPlan, Scenario } from './scenarios/scenario.js';
import { formatComparison, formatMetricsCost, formatScaling, formatStoreShare, formatTable, ratios, type ScenarioResult } from './table.js';
import { CeilingFactory } from './targets/ceiling.js';
import { ExternalFactory } from './targets/external.js';
import { OidcProviderFactory } from './targets/oidc-provider.js';
import { SesameFactory } from './targets/sesame.js';
import type { PreparedTarget, TargetFactory } from './targets/target.js';

/**
 * `npm run bench`: starts Sesame (and, with --compare, the ceiling and/or oidc-provider) or connects
 * to --target, runs each scenario with autocannon, prints a table and writes JSON under bench/results/.
 */
function factoriesFor(options: BenchOptions): TargetFactory[] {
  if (options.target) return [new ExternalFactory(options as BenchOptions & { target: string; clientId: string; clientSecret: string })];
  const signers = options.signer === 'both' ? (['pool', 'inline'] as const) : [options.signer];
  const metrics = options.metrics === 'both' ? [false, true] : [options.metrics === 'on'];
  const threadCounts = options.httpThreads ?? [undefined];
  const list: TargetFactory[] = threadCounts.flatMap((threads) =>
    signers.flatMap((signer) =>
      metrics.map((on) => {
        const name = ['sesame', options.signer === 'both' ? signer : '', options.metrics === 'both' ? (on ? 'metrics-on' : 'metrics-off') : '', threadCounts.length > 1 ? `t${threads}` : '']
          .filter(Boolean)
          .join(':');
        return new SesameFactory(options, signer, name, on, threads);
      }),
    ),
  );
  // On PostgreSQL too (--database-url): each Sesame row again, on the database, with --nodes nodes.
  if (options.databaseUrl) {
    const postgres = { url: options.databaseUrl, nodes: options.nodes };
    const onLmdb = [...list];
    for (const factory of onLmdb) {
      if (!(factory instanceof SesameFactory)) continue;
      list.push(factory.onPostgres(postgres, `${factory.name}:postgres${options.nodes > 1 ? `:${options.nodes}-nodes` : ''}`));
    }
  }
  for (const comparison of options.compare) list.push(comparison === 'ceiling' ? new CeilingFactory(options) : new OidcProviderFactory());
  return list;
}

/** Sends a scenario's load, with the server's RSS and CPU measured from when the load starts (every load thread prepared). */
async function runPlan(scenario: string, target: PreparedTarget, plan: RequestPlan | undefined, options: BenchOptions) {
  let windows: { rss: ReturnType<typeof sampleRss>; cpu: ReturnType<typeof cpuWindow> } | undefined;
  const started = () => void (windows = { rss: sampleRss(target.pid), cpu: cpuWindow(target.pid, target.httpThreadIds) });
  const result = await sendLoad(scenario, target, plan, options, started);
  const measured = windows!;
  return 'skip' in result ? { skip: result.skip } : { result, peakRssMiB: measured.rss.stop(), cpu: measured.cpu.stop() };
}

/** The busiest HTTP thread's share of the HTTP threads' CPU over a window (when every thread was read). */
export function busiestShare(threads: readonly (number | undefined)[]): { busiestThreadShare?: number } {
  if (threads.length === 0 || threads.some((t) => t === undefined)) return {};
  const spent = threads as number[];
  const total = spent.reduce((a, b) => a + b, 0);
  return total > 0 ? { busiestThreadShare: Math.max(...spent) / total } : {};
}

/**
 * Groups scenarios by algorithm so each Sesame instance is started once; the largest group runs
 * last, so the settled-RSS check (--settle) looks at the instance that did the most work.
 */
export function inAlgOrder(scenarios: readonly Scenario[]): Scenario[] {
  const groups = [...new Set(scenarios.map((s) => s.alg))].map((alg) => scenarios.filter((s) => s.alg === alg));
  groups.sort((a, b) => a.length - b.length);
  return groups.flat();
}

export async function runBench(options: BenchOptions): Promise<ScenarioResult[]> {
  const scenarios = inAlgOrder(selectScenarios(options.scenarios));
  const factories = factoriesFor(options);
  const results: ScenarioResult[] = [];
  const skipped: string[] = [];
  const notes = new Set<string>();
  const idle = new Map<string, Rss | undefined>();
  try {
    for (const [index, scenario] of scenarios.entries()) {
      // Rotate which target goes first, so none always gets the warmer machine.
      const order = factories.map((_, i) => factories[(i + index) % factories.length]!);
      for (const factory of order) {
        const target = await factory.open(scenario.alg);
        for (const n of target.notes) notes.add(n);
        const idleKey = `${target.name}:${target.pid}`;
        if (!idle.has(idleKey)) idle.set(idleKey, rssBreakdown(target.pid));
        if ('run' in scenario) {
          process.stdout.write(`▶ ${scenario.name} on ${target.name} ...\n`);
          const rows = await scenario.run(target);
          if ('skip' in rows) {
            skipped.push(`${scenario.name} on ${target.name}: ${rows.skip}`);
            process.stdout.write(`- ${scenario.name} on ${target.name}: skipped (${rows.skip})\n`);
          } else {
            results.push(...rows);
          }
          continue;
        }
        // A target that cannot be prepared for one scenario costs that row, not the whole run.
        // Several load threads prepare their own plans (load.ts): none is made here then.
        const plan =
          loadThreadCount(options, target.origins?.length) > 1
            ? undefined
            : await scenario.plan(target, options).catch((error: unknown) => ({ skip: `preparing failed: ${error instanceof Error ? error.message : String(error)}` }));
        if (plan && 'skip' in plan) {
          skipped.push(`${scenario.name} on ${target.name}: ${plan.skip}`);
          process.stdout.write(`- ${scenario.name} on ${target.name}: skipped (${plan.skip})\n`);
          continue;
        }
        process.stdout.write(`▶ ${scenario.name} on ${target.name}: ${options.duration}s, ${options.connections} connections ... `);
        const ran = await runPlan(scenario.name, target, plan, options);
        if ('skip' in ran) {
          skipped.push(`${scenario.name} on ${target.name}: ${ran.skip}`);
          process.stdout.write(`skipped (${ran.skip})\n`);
          continue;
        }
        const { result, peakRssMiB, cpu } = ran;
        const answered = result.total;
        const scraped = target.metricsUrl ? await scrapeThreadMemory(target.metricsUrl) : undefined;
        const memory = scraped ? { ...scraped, ...(rssBreakdown(target.pid) ? { rss: rssBreakdown(target.pid)! } : {}) } : undefined;
        const row: ScenarioResult = {
          scenario: scenario.name,
          target: target.name,
          requests: result.total,
          // autocannon averages whole-second buckets: a fixed-amount run ending mid-second is timed instead.
          rps: plan?.amount ? answered / ((result.finish - result.start) / 1000) : result.average,
          p50: result.p50,
          p99: result.p99,
          p999: result.p999,
          non2xx: result.non2xx,
          errors: result.errors,
          ...(peakRssMiB === undefined ? {} : { peakRssMiB }),
          ...(cpu.server === undefined || answered === 0 ? {} : { cpuUsPerRequest: cpu.server / answered }),
          ...(cpu.mainThread === undefined || answered === 0 ? {} : { mainThreadUsPerRequest: cpu.mainThread / answered }),
          loadGeneratorShare: cpu.loadGenerator / (cpu.wall * availableParallelism()),
          ...(target.httpThreads === undefined ? {} : { httpThreads: target.httpThreads }),
          ...busiestShare(cpu.threads),
          ...(memory ? { memory } : {}),
        };
        results.push(row);
        const cpuNote = row.cpuUsPerRequest === undefined ? '' : `, ${row.cpuUsPerRequest.toFixed(0)} CPU µs/req`;
        process.stdout.write(`${row.rps.toFixed(0)} req/s, p99 ${row.p99} ms, non-2xx ${row.non2xx}, errors ${row.errors}${cpuNote}\n`);
      }
    }
    if (options.settle > 0) {
      process.stdout.write(`waiting ${options.settle}s for the servers to settle ...\n`);
      await new Promise((r) => setTimeout(r, options.settle * 1000));
    }
    const settled: { target: string; idle?: Rss; settled?: Rss }[] = [];
    for (const factory of factories) {
      const target = await factory.open(scenarios[scenarios.length - 1]?.alg ?? 'RS256');
      const before = idle.get(`${target.name}:${target.pid}`);
      const after = options.settle > 0 ? rssBreakdown(target.pid) : undefined;
      settled.push({ target: target.name, ...(before ? { idle: before } : {}), ...(after ? { settled: after } : {}) });
    }

    process.stdout.write(`\n${formatTable(results)}\n`);
    if ((options.httpThreads?.length ?? 0) > 1) process.stdout.write(`\n${formatScaling(results)}\n`);
    if (options.compare.length > 0) process.stdout.write(`\n${formatComparison(results, options.compare)}\n`);
    if (options.metrics === 'both') process.stdout.write(`\n${formatMetricsCost(results)}\n`);
    if (options.databaseUrl) process.stdout.write(`\n${formatStoreShare(results)}\n`);
    if (results.some((r) => r.memory)) process.stdout.write(`\n${formatThreadMemory(results)}\n`);
    for (const s of settled) {
      if (s.idle !== undefined && s.settled !== undefined) {
        const show = (r: Rss) => `${r.total.toFixed(0)} MiB (anon ${r.anon.toFixed(0)}, file ${r.file.toFixed(0)})`;
        process.stdout.write(`${s.target}: RSS idle ${show(s.idle)}, ${options.settle}s after the run ${show(s.settled)}\n`);
      }
    }
    for (const note of notes) process.stdout.write(`note: ${note}\n`);
    for (const skip of skipped) process.stdout.write(`skipped: ${skip}\n`);
    writeResults(options, results, [...notes], skipped, settled);
    return results;
  } finally {
    for (const factory of factories) await factory.close();
  }
}

function writeResults(options: BenchOptions, results: ScenarioResult[], notes: string[], skipped: string[], settled: unknown[]): void {
  const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const at = new Date();
  const file = `${dir}${at.toISOString().replace(/[:.]/g, '-')}.json`;
  const machine = {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
  writeFileSync(
    file,
    JSON.stringify({ at: at.toISOString(), machine, settings: options, results, ratios: Object.fromEntries(options.compare.map((c) => [c, ratios(results, c)])), settled, notes, skipped }, null, 2),
  );
  process.stdout.write(`results written to ${file}\n`);
}

async function main(): Promise<void> {
  let options: BenchOptions;
  try {
    options = parseBenchArgs(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof BenchArgsError) {
      process.stderr.write(`bench: ${error.message}\n\n${HELP}`);
      process.exit(2);
    }
    throw error;
  }
  if (options.help) {
    process.stdout.write(HELP);
    return;
  }
  await runBench(options);
  // Ended on purpose: a PostgreSQL server started for the run (--database-url embedded) is a child
  // whose pipes would keep the process alive; exiting stops it (its exit handler).
  process.exit(0);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
