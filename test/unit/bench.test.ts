import { describe, expect, it } from 'vitest';
import { BenchArgsError, parseBenchArgs } from '../../bench/args.js';
import { SCENARIOS, selectScenarios } from '../../bench/scenarios/index.js';
import { cyclingTokenPost, pathOf } from '../../bench/scenarios/scenario.js';
import { formatComparison, formatMetricsCost, formatScaling, formatTable, ratios, type ScenarioResult } from '../../bench/table.js';
import { busiestShare } from '../../bench/run.js';
import { formatThreadMemory, parseThreadMemory } from '../../bench/thread-memory.js';
import { mergeLoad, shares, type RawResult } from '../../bench/load.js';
import autocannon from 'autocannon';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

describe('bench arguments', () => {
  it('has the documented defaults', () => {
    const o = parseBenchArgs([]);
    expect(o).toMatchObject({ duration: 10, connections: 50, pipelining: 1, signer: 'auto', settle: 0 });
    expect(o.scenarios).toBeUndefined();
    expect(o.compare).toEqual([]);
  });
  it('parses every flag, in both spellings', () => {
    const o = parseBenchArgs([
      '--duration',
      '3',
      '--connections=20',
      '--pipelining',
      '4',
      '--scenarios',
      'cc-opaque,jwks',
      '--workers',
      '2',
      '--signer',
      'both',
      '--compare',
      'oidc-provider',
      '--settle',
      '60',
      '--durability',
      'commit',
    ]);
    expect(o).toMatchObject({
      duration: 3,
      connections: 20,
      pipelining: 4,
      scenarios: ['cc-opaque', 'jwks'],
      workers: 2,
      signer: 'both',
      compare: ['oidc-provider'],
      settle: 60,
      durability: 'commit',
    });
  });
  it('takes --target credentials from flags or the environment', () => {
    const o = parseBenchArgs(['--target', 'https://id.example.com/'], { BENCH_CLIENT_ID: 'svc', BENCH_CLIENT_SECRET: 's' });
    expect(o).toMatchObject({ target: 'https://id.example.com', clientId: 'svc', clientSecret: 's' });
    expect(parseBenchArgs(['--target', 'http://x', '--client-id', 'a', '--client-secret', 'b']).clientId).toBe('a');
  });
  it('rejects bad values with a message', () => {
    for (const bad of [
      ['--duration', '0'],
      ['--connections', 'many'],
      ['--signer', 'gpu'],
      ['--compare', 'keycloak'],
      ['--target', 'ftp://x', '--client-id', 'a', '--client-secret', 'b'],
      ['--nope'],
      ['--duration'],
    ]) {
      expect(() => parseBenchArgs(bad)).toThrow(BenchArgsError);
    }
    expect(() => parseBenchArgs(['--target', 'http://x'])).toThrow(/client-id/);
    expect(() => parseBenchArgs(['--target', 'http://x', '--client-id', 'a', '--client-secret', 'b', '--compare', 'oidc-provider'])).toThrow(/cannot be combined/);
    expect(() => parseBenchArgs(['--compare', 'ceiling,keycloak'])).toThrow(/keycloak/);
  });
  it('runs Sesame with metrics off (default), on, or both side by side', () => {
    expect(parseBenchArgs([]).metrics).toBe('off');
    expect(parseBenchArgs(['--metrics', 'both']).metrics).toBe('both');
    expect(parseBenchArgs(['--metrics=on']).metrics).toBe('on');
    expect(() => parseBenchArgs(['--metrics', 'yes'])).toThrow(/--metrics must be off, on or both/);
  });
  it('compares with the ceiling, the peer or both, the ceiling first', () => {
    expect(parseBenchArgs(['--compare', 'ceiling']).compare).toEqual(['ceiling']);
    expect(parseBenchArgs(['--compare', 'oidc-provider,ceiling']).compare).toEqual(['ceiling', 'oidc-provider']);
  });
});

describe('scenario selection', () => {
  it('selects by name and by prefix', () => {
    expect(selectScenarios(['cc-jwt']).map((s) => s.name)).toEqual(['cc-jwt-RS256', 'cc-jwt-ES256', 'cc-jwt-EdDSA']);
    expect(selectScenarios(['jwks', 'revoke']).map((s) => s.name)).toEqual(['jwks', 'revoke']);
    expect(selectScenarios(undefined)).toHaveLength(SCENARIOS.length);
  });
  it('rejects unknown scenarios', () => {
    expect(() => selectScenarios(['warp-speed'])).toThrow(/unknown scenario/);
  });
  it('has the required scenarios', () => {
    expect(SCENARIOS.map((s) => s.name)).toEqual([
      'discovery',
      'jwks',
      'cc-opaque',
      'cc-jwt-RS256',
      'cc-jwt-ES256',
      'cc-jwt-EdDSA',
      'cc-dpop',
      'introspect-opaque',
      'introspect-jwt',
      'revoke',
      'jwt-bearer',
      'token-exchange',
      'code-flow',
      'refresh',
    ]);
  });
  it('cycles through a token pool, one token per request', () => {
    const plan = cyclingTokenPost('http://h:1/oauth/v2/introspect', { id: 'c', secret: 's' }, ['t1', 't 2']);
    const request = plan.requests[0]!;
    expect(request.path).toBe('/oauth/v2/introspect');
    expect(request.headers!.authorization).toBe(`Basic ${Buffer.from('c:s').toString('base64')}`);
    const bodies = [1, 2, 3].map(() => request.setupRequest!({}).body);
    expect(bodies).toEqual(['token=t1', 'token=t%202', 'token=t1']);
    expect(pathOf('http://h/a/b?x=1')).toBe('/a/b?x=1');
  });
});

describe('result table', () => {
  const r = (scenario: string, target: string, rps: number, cpuUsPerRequest?: number): ScenarioResult => ({
    scenario,
    target,
    requests: rps * 10,
    rps,
    p50: 1.5,
    p99: 9.25,
    p999: 20,
    non2xx: 0,
    errors: 0,
    peakRssMiB: 120,
    ...(cpuUsPerRequest === undefined ? {} : { cpuUsPerRequest, mainThreadUsPerRequest: cpuUsPerRequest / 2, loadGeneratorShare: 0.4 }),
  });
  it('prints one row per result with the required columns', () => {
    const table = formatTable([r('cc-opaque', 'sesame', 16000), r('cc-opaque', 'oidc-provider', 8000)]).split('\n');
    expect(table[0]).toMatch(/scenario\s+target\s+req\/s\s+p50 ms\s+p99 ms\s+p99\.9 ms\s+non-2xx\s+errors/);
    expect(table).toHaveLength(4);
    expect(table[2]).toMatch(/cc-opaque\s+sesame\s+16000\s+1\.5\s+9\.3\s+20\.0\s+0\s+0\s+120\s+-\s+-\s+-$/);
    // CPU per request, of it the main thread's, and the load generator's share.
    expect(formatTable([r('cc-opaque', 'sesame', 16000, 81.4)]).split('\n')[2]).toMatch(/120\s+81\s+41\s+40%$/);
  });
  it('computes Sesame/peer ratios per scenario', () => {
    const list = ratios([r('cc-opaque', 'sesame', 16000), r('cc-opaque', 'oidc-provider', 8000), r('jwks', 'sesame', 5)], 'oidc-provider');
    expect(list).toEqual([{ scenario: 'cc-opaque', target: 'sesame', ratio: 2 }]);
  });
  it('compares Sesame with the ceiling and the peer in one line per scenario, CPU per request beside', () => {
    const results = [
      r('cc-opaque', 'sesame', 9000, 160),
      r('cc-opaque', 'ceiling', 10000, 100),
      r('cc-opaque', 'oidc-provider', 3000, 350),
      r('introspect-opaque', 'sesame', 12000, 80),
      r('introspect-opaque', 'ceiling', 12000, 78),
      r('introspect-jwt', 'sesame', 6000, 167),
    ];
    const lines = formatComparison(results, ['ceiling', 'oidc-provider']).split('\n');
    expect(lines[0]).toMatch(/^scenario\s+sesame req\/s\s+ceiling req\/s\s+of ceiling\s+oidc-provider req\/s\s+vs oidc-provider\s+CPU µs\/req \(sesame \/ ceiling \/ oidc-provider\)$/);
    expect(lines[2]).toMatch(/^cc-opaque\s+9000\s+10000\s+0\.90\s+3000\s+3\.00x\s+160 \/ 100 \/ 350$/);
    expect(lines[3]).toMatch(/^introspect-opaque\s+12000\s+12000\s+1\.00\s+-\s+-\s+80 \/ 78 \/ -$/);
    // JWT introspection is held against the opaque ceiling, and says so.
    expect(lines[4]).toMatch(/^introspect-jwt\s+6000\s+12000 \(introspect-opaque\)\s+0\.50\s+-\s+-\s+167 \/ 78 \/ -$/);
  });
  it('keeps pool and inline rows apart when both signers run', () => {
    const list = ratios([r('cc-jwt-ES256', 'sesame:pool', 6000), r('cc-jwt-ES256', 'sesame:inline', 9000), r('cc-jwt-ES256', 'oidc-provider', 3000)], 'oidc-provider');
    expect(list.map((x) => `${x.target} ${x.ratio}`)).toEqual(['sesame:pool 2', 'sesame:inline 3']);
    const lines = formatComparison([r('cc-jwt-ES256', 'sesame:pool', 6000), r('cc-jwt-ES256', 'sesame:inline', 9000), r('cc-jwt-ES256', 'oidc-provider', 3000)], ['oidc-provider']).split('\n');
    expect(lines.slice(2)).toEqual([expect.stringMatching(/sesame:pool\s+6000\s+3000\s+2\.00x/), expect.stringMatching(/sesame:inline\s+9000\s+3000\s+3\.00x/)]);
  });
});

describe('run order', () => {
  it('runs each algorithm group together, the largest group last', async () => {
    const { inAlgOrder } = await import('../../bench/run.js');
    const names = inAlgOrder(SCENARIOS).map((s) => s.name);
    expect(names.slice(0, 2).sort()).toEqual(['cc-jwt-ES256', 'cc-jwt-EdDSA']);
    expect(names.slice(2)).toEqual([
      'discovery',
      'jwks',
      'cc-opaque',
      'cc-jwt-RS256',
      'cc-dpop',
      'introspect-opaque',
      'introspect-jwt',
      'revoke',
      'jwt-bearer',
      'token-exchange',
      'code-flow',
      'refresh',
    ]);
  });
});

describe('the metrics cost', () => {
  const row = (scenario: string, target: string, rps: number, cpuUsPerRequest: number): ScenarioResult =>
    ({ scenario, target, requests: rps * 10, rps, p50: 1, p99: 2, p999: 3, non2xx: 0, errors: 0, cpuUsPerRequest, loadGeneratorShare: 0.3 }) as ScenarioResult;
  it('shows req/s with metrics on as a share of off, per scenario and signer', () => {
    const text = formatMetricsCost([
      row('cc-opaque', 'sesame:metrics-off', 20000, 50),
      row('cc-opaque', 'sesame:metrics-on', 19600, 51),
      row('introspect-opaque', 'sesame:metrics-off', 40000, 25),
      row('introspect-opaque', 'sesame:metrics-on', 40000, 25),
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/scenario\s+sesame\s+off req\/s\s+on req\/s\s+on\/off/);
    expect(lines[2]).toMatch(/^cc-opaque\s+sesame\s+20000\s+19600\s+0\.980\s+50\.0 \/ 51\.0$/);
    expect(lines[3]).toMatch(/^introspect-opaque\s+sesame\s+40000\s+40000\s+1\.000/);
  });
});

describe('scaling over HTTP threads', () => {
  it('takes one thread count or several, each once', () => {
    expect(parseBenchArgs(['--http-threads', '2']).httpThreads).toEqual([2]);
    expect(parseBenchArgs(['--http-threads=1,2,4,8']).httpThreads).toEqual([1, 2, 4, 8]);
    for (const bad of [
      ['--http-threads', '1,1'],
      ['--http-threads', '0'],
      ['--http-threads', '1,x'],
      ['--http-threads', '65'],
    ]) {
      expect(() => parseBenchArgs(bad)).toThrow(BenchArgsError);
    }
  });

  it("gives the busiest HTTP thread's share of their CPU, and nothing when a thread could not be read", () => {
    expect(busiestShare([300, 100])).toEqual({ busiestThreadShare: 0.75 });
    expect(busiestShare([500])).toEqual({ busiestThreadShare: 1 });
    expect(busiestShare([])).toEqual({});
    expect(busiestShare([100, undefined])).toEqual({});
    expect(busiestShare([0, 0])).toEqual({});
  });

  it('prints req/s, efficiency against the first count, CPU per request and the busiest share per count', () => {
    const row = (scenario: string, threads: number, rps: number, busiest: number): ScenarioResult => ({
      scenario,
      target: `sesame:t${threads}`,
      requests: rps,
      rps,
      p50: 1,
      p99: 2,
      p999: 3,
      non2xx: 0,
      errors: 0,
      cpuUsPerRequest: 80 + threads,
      httpThreads: threads,
      busiestThreadShare: busiest,
    });
    const lines = formatScaling([row('refresh', 1, 5000, 1), row('refresh', 2, 7500, 0.52), row('refresh', 4, 10000, 0.3), row('discovery', 1, 100000, 1), row('discovery', 4, 400000, 0.25)]).split(
      '\n',
    );
    expect(lines[0]).toMatch(/scaling\s+target\s+1 thr: req\/s {2}eff {2}µs {2}max\s+2 thr: .*4 thr: /);
    // 7500 at 2 threads is 0.75 of twice 5000; 10000 at 4 is 0.50 of four times.
    expect(lines[2]).toMatch(/^refresh\s+sesame\s+5000 {2}1\.00 {2}81 {2}100%\s+7500 {2}0\.75 {2}82 {2}52%\s+10000 {2}0\.50 {2}84 {2}30%$/);
    // A count a scenario did not run at is a dash.
    expect(lines[3]).toMatch(/^discovery\s+sesame\s+100000 {2}1\.00 {2}81 {2}100%\s+-\s+400000 {2}1\.00 {2}84 {2}25%$/);
  });
});

describe('thread memory', () => {
  it('reads each HTTP thread heap and the worker threads from a scrape, and shows what the anonymous memory holds beyond the heaps', () => {
    const scrape = [
      '# HELP sesame_thread_heap_bytes V8 heap of each HTTP thread',
      '# TYPE sesame_thread_heap_bytes gauge',
      'sesame_thread_heap_bytes{thread="0",stat="total"} 62914560',
      'sesame_thread_heap_bytes{thread="0",stat="used"} 41943040',
      'sesame_thread_heap_bytes{thread="1",stat="used"} 10485760',
      'sesame_thread_heap_bytes{thread="1",stat="total"} 31457280',
      'sesame_thread_heap_bytes{thread="2",stat="total"} 20971520',
      'sesame_worker_threads{pool="crypto"} 0',
      'sesame_worker_threads{pool="password"} 2',
    ].join('\n');
    const memory = parseThreadMemory(scrape);
    expect(memory).toEqual({ heapMiB: [60, 30, 20], usedMiB: [40, 10, 0], cryptoWorkers: 0, passwordWorkers: 2 });
    const table = formatThreadMemory([
      { scenario: 'refresh', target: 'sesame', memory: { ...memory, rss: { total: 200, anon: 140, file: 60 } } },
      { scenario: 'discovery', target: 'ceiling' },
    ]).split('\n');
    expect(table).toHaveLength(3);
    // 140 MiB anonymous, 110 of it the three HTTP threads' heaps.
    expect(table[2]).toMatch(/^refresh\s+sesame\s+200\s+140\s+60\s+60 \(40\)\s+2 × 25 \(5\)\s+0\/2\s+30$/);
  });
});

describe('load threads', () => {
  it('--load-threads: 1 by default, a whole number otherwise', () => {
    expect(parseBenchArgs([]).loadThreads).toBe(1);
    expect(parseBenchArgs(['--load-threads', '4']).loadThreads).toBe(4);
    expect(() => parseBenchArgs(['--load-threads', '0'])).toThrow(BenchArgsError);
  });

  it('splits connections and the rate into whole shares that add up', () => {
    expect(shares(50, 4)).toEqual([13, 13, 12, 12]);
    expect(shares(3, 4)).toEqual([1, 1, 1, 0]);
    expect(shares(10_000, 3).reduce((a, b) => a + b, 0)).toBe(10_000);
  });

  it("merges the load threads' raw results: every request counted once, latency percentiles over all of them", async () => {
    // Answers after 0 ms on the first run's requests and 20 ms on the second's: the merged tail is the slow one.
    let delay = 0;
    const server = createServer((_req, res) => setTimeout(() => res.end('ok'), delay)).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const run = async () => (await autocannon({ url, connections: 2, amount: 40, skipAggregateResult: true } as autocannon.Options)) as unknown as RawResult;
      const fast = await run();
      delay = 20;
      const slow = await run();
      const merged = mergeLoad(url, [fast, slow], { connections: 4, duration: 1 });
      expect(merged.total).toBe(80);
      expect(merged.non2xx).toBe(0);
      expect(merged.errors).toBe(0);
      expect(merged.p99).toBeGreaterThanOrEqual(20);
      expect(merged.p50).toBeLessThanOrEqual(merged.p99);
      expect(merged.average).toBeGreaterThan(0);
      expect(merged.finish).toBeGreaterThan(merged.start);
    } finally {
      server.close();
    }
  });
});
