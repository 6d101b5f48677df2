import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createWebApp, exchangeCode, responseParams, signIn } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { readmeBlocks, type Block } from './helpers/readme.js';
import { startSmtpReceiver, type SmtpReceiver } from './helpers/smtp-receiver.js';

/**
 * The README's examples, run as a new user runs them: every `sh` and `js` fenced block in order, in
 * one bash script (`bash -euo pipefail`, so shell variables carry from block to block), against a
 * fresh server. A `js` block is written to a `.mjs` file in a work dir inside the checkout (so its
 * imports resolve from the project's node_modules, as ESM needs) and run with `node` at its place in
 * the script, with the variables the blocks exported.
 *
 * Nothing in a block is rewritten. The blocks read where things are from variables with the
 * defaults a user has: `SESAME` (http://localhost:8080), `SESAME_DATA_DIR` (data: admin.pat),
 * `SMTP_RELAY` (localhost:25: the test's SMTP receiver),
 * `DST` / `DST_DATA_DIR` (the second instance of the export/import walkthrough: localhost:8081,
 * data-b), `KEYS` (~/.sesame-keys). The test sets them to two servers of its own and temp dirs.
 *
 * A block preceded by `<!-- doc-test: skip (reason) -->` is not run (it starts a server, runs the
 * suite or a benchmark, or needs a browser or a cloud bucket); the test checks that such skips
 * stay few and give a reason.
 */
const root = fileURLToPath(new URL('..', import.meta.url));

/** One bash script running the runnable blocks in order; js blocks become files next to it. */
function readmeScript(blocks: Block[], workDir: string): string {
  const parts = ['set -euo pipefail'];
  blocks.forEach((block, index) => {
    if (block.skip || (block.lang !== 'sh' && block.lang !== 'js')) return;
    parts.push(`echo "@@ README.md:${block.line} (${block.lang})" >&2`);
    if (block.lang === 'sh') {
      parts.push(block.text);
    } else {
      const file = join(workDir, `block-${index}-line-${block.line}.mjs`);
      writeFileSync(file, block.text);
      parts.push(`node ${JSON.stringify(file)}`);
    }
  });
  parts.push('echo "@@ README.md: all blocks ran" >&2');
  return parts.join('\n');
}

function run(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('README examples', () => {
  const blocks = readmeBlocks(readFileSync(join(root, 'README.md'), 'utf8'));
  let source: InProcessServer;
  let target: InProcessServer;
  let workDir: string;
  let keysDir: string;
  let relay: SmtpReceiver;

  beforeAll(async () => {
    relay = await startSmtpReceiver();
    // The README's reader runs the defaults (RS256) on real time: the examples' client libraries
    // date what they sign by the system clock. (test/npm-start.test.ts starts it as the README's
    // first command does.)
    const defaults = () => ({ env: { SESAME_SIGNING_ALG: 'RS256' }, clock: TestClock.followingSystem() });
    [source, target] = await Promise.all([startInProcess(defaults()), startInProcess(defaults())]);
    // Inside the checkout (test/artifacts/ is ignored by git): node resolves the js blocks' imports
    // (jose, openid-client) from the project's node_modules, as it does for a user's own project.
    mkdirSync(join(root, 'test', 'artifacts'), { recursive: true });
    workDir = mkdtempSync(join(root, 'test', 'artifacts', 'readme-'));
    keysDir = mkdtempSync(join(workDir, 'keys-'));
  });

  afterAll(async () => {
    await Promise.all([source?.close(), target?.close(), relay?.close()]);
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('has its tools: bash, curl and jq', async () => {
    const { code, output } = await run('command -v curl && command -v jq', root, {});
    expect(code, `the README's examples need curl and jq:\n${output}`).toBe(0);
  });

  it('skips few blocks, each with a reason', () => {
    const skipped = blocks.filter((b) => b.skip);
    // The quickstart, production install, the browser RP, cloud storage, the benchmark, development, and the
    // CLI's server and files, two nodes on PostgreSQL (test/multi-node.test.ts runs that one): each starts or installs something of its own.
    expect(skipped.length).toBeLessThanOrEqual(9);
    expect(blocks.filter((b) => (b.lang === 'sh' || b.lang === 'js') && !b.skip).length).toBeGreaterThanOrEqual(8);
  });

  it('runs every sh and js block in order against a fresh server', { timeout: 180_000 }, async () => {
    const script = readmeScript(blocks, workDir);
    const { code, output } = await run(script, workDir, {
      // The server's own address (its issuer, http://localhost:<port>), as a user's is http://localhost:8080.
      SESAME: source.issuer,
      SESAME_DATA_DIR: source.dataDir,
      DST: target.issuer,
      DST_DATA_DIR: target.dataDir,
      KEYS: keysDir,
      SMTP_RELAY: relay.host,
    });
    const failedAt = [...output.matchAll(/^@@ (README\.md:.*)$/gm)].pop()?.[1];
    const report = `README block failed (last started: ${failedAt}), exit code ${code}:\n${output.slice(-6000)}`;
    expect(code, report).toBe(0);
    expect(failedAt, report).toBe('README.md: all blocks ran');
    // The SMTP example's test call reached the relay.
    expect(relay.mails.map((m) => m.to)).toContain('you@example.com');
  });

  it('the person the export/import walkthrough moved signs in on the target with her old password', async () => {
    // The README says so but cannot show it without a browser: walk the target's login pages.
    const app = await createWebApp(target);
    const params = new URLSearchParams({ client_id: app.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope: 'openid' });
    const done = await signIn(new Agent(target), `/oauth/v2/authorize?${params}`, { loginName: 'grace@acme.localhost', password: 'Correct-Horse-9' });
    expect(done.location, done.html?.slice(0, 2000)).toMatch(/^http:\/\/localhost:9999\/callback\?/);
    expect(responseParams(done.location!).get('code')).toBeTruthy();
    const tokens = await exchangeCode(target, app, done.location!);
    expect(tokens.status).toBe(200);
    expect(tokens.claims.sub).toMatch(/^\d+$/);
  });
});
