import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createWebApp, exchangeCode, responseParams, signIn } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { docBlocks, docFiles, docPrerequisites, readDoc, runnableBlocks } from './helpers/doc-blocks.js';
import { startSmtpReceiver, type SmtpReceiver } from './helpers/smtp-receiver.js';

/**
 * The examples of the README and of every guide in docs/, run as a new user runs them: each doc's
 * `sh` and `js` fenced blocks in order, in one bash script (`bash -euo pipefail`, so shell variables
 * carry from block to block), against a fresh server of its own. A guide continues in the shell of
 * the README's first token (its blocks run first), and of the guides it names in
 * `<!-- doc-test: after <guide> -->`. A `js` block is written to a `.mjs` file in a work dir inside
 * the checkout (so its imports resolve from the project's node_modules, as ESM needs) and run with
 * `node` at its place in the script, with the variables the blocks exported.
 *
 * Nothing in a block is rewritten. The blocks read where things are from variables with the
 * defaults a user has: `SESAME` (http://localhost:8080), `SESAME_DATA_DIR` (data: admin.pat),
 * `SMTP_RELAY` (localhost:25: the test's SMTP receiver), `DST` / `DST_DATA_DIR` (the second
 * instance of the export/import guide: localhost:8081, data-b), `KEYS` (~/.sesame-keys). The test
 * sets them to servers of its own and temp dirs.
 *
 * A block preceded by `<!-- doc-test: skip (reason) -->` is not run (it starts a server, runs the
 * suite or a benchmark, or needs a browser); the test checks that such skips stay few and give a
 * reason.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const files = docFiles(root);
const texts = new Map(files.map((file) => [file, readDoc(root, file)]));
const text = (file: string) => texts.get(file) ?? readDoc(root, file);

/** The docs whose blocks run before `file`'s, in order: the README, then the guides it names. */
function continuesFrom(file: string): string[] {
  if (file === 'README.md') return [];
  return ['README.md', ...docPrerequisites(text(file)).map((guide) => `docs/${guide}`)];
}

/** One bash script running the runnable blocks in order; js blocks become files next to it. */
function docScript(file: string, workDir: string): string {
  const parts = ['set -euo pipefail'];
  for (const doc of [...continuesFrom(file), file]) {
    runnableBlocks(text(doc)).forEach((block) => {
      parts.push(`echo "@@ ${doc}:${block.line} (${block.lang})" >&2`);
      if (block.lang === 'sh') {
        parts.push(block.text);
      } else {
        const script = join(workDir, `${doc.replace(/\W/g, '-')}-line-${block.line}.mjs`);
        writeFileSync(script, block.text);
        parts.push(`node ${JSON.stringify(script)}`);
      }
    });
  }
  parts.push(`echo "@@ ${file}: all blocks ran" >&2`);
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

// The docs' reader runs the defaults (RS256) on real time: the examples' client libraries date what
// they sign by the system clock. (test/npm-start.test.ts starts it as the README's first command does.)
const defaults = () => ({ env: { SESAME_SIGNING_ALG: 'RS256' }, clock: TestClock.followingSystem() });

let relay: SmtpReceiver;
beforeAll(async () => {
  relay = await startSmtpReceiver();
  // Inside the checkout (test/artifacts/ is ignored by git): node resolves the js blocks' imports
  // (jose, openid-client) from the project's node_modules, as it does for a user's own project.
  mkdirSync(join(root, 'test', 'artifacts'), { recursive: true });
});
afterAll(async () => {
  await relay?.close();
});

describe('the docs', () => {
  it('have their tools: bash, curl and jq', async () => {
    const { code, output } = await run('command -v curl && command -v jq', root, {});
    expect(code, `the docs' examples need curl and jq:\n${output}`).toBe(0);
  });

  it('skip few blocks, each with a reason, and run many', () => {
    const blocks = files.flatMap((file) => docBlocks(text(file)).map((block) => ({ file, ...block })));
    const skipped = blocks.filter((b) => b.skip);
    // The quickstart, production install, the browser RP, the benchmark, development, the CLI's server
    // and files, two nodes on PostgreSQL (test/multi-node.test.ts runs that one), the second instance
    // of the export/import guide: each starts or installs something of its own.
    expect(skipped.length, `skipped: ${skipped.map((b) => `${b.file}:${b.line}`).join(', ')}`).toBeLessThanOrEqual(9);
    for (const b of skipped) expect(b.skip!.length, `${b.file}:${b.line} gives no reason`).toBeGreaterThan(10);
    expect(blocks.filter((b) => (b.lang === 'sh' || b.lang === 'js') && !b.skip).length).toBeGreaterThanOrEqual(20);
  });

  it('say what each guide continues from, and those guides exist', () => {
    for (const file of files.filter((f) => f !== 'README.md' && runnableBlocks(text(f)).length > 0)) {
      expect(text(file), `${file} runs after the README's first token and must say so`).toContain('](../README.md#a-first-machine-to-machine-token)');
      for (const guide of docPrerequisites(text(file))) {
        expect(files, `${file} continues from docs/${guide}, which does not exist`).toContain(`docs/${guide}`);
        expect(text(file), `${file} continues from ${guide} and must link it`).toContain(`](${guide}`);
      }
    }
  });
});

for (const file of files.filter((f) => runnableBlocks(text(f)).length > 0)) {
  describe(`${file}'s examples`, () => {
    let source: InProcessServer;
    let target: InProcessServer | undefined;
    let workDir: string;

    beforeAll(async () => {
      // A second instance only for the docs that move data to one.
      const needsTarget = [...continuesFrom(file), file].some((doc) => text(doc).includes('$DST'));
      [source, target] = await Promise.all([startInProcess(defaults()), needsTarget ? startInProcess(defaults()) : undefined]);
      workDir = mkdtempSync(join(root, 'test', 'artifacts', 'docs-'));
    });

    afterAll(async () => {
      await Promise.all([source?.close(), target?.close()]);
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    it('run every sh and js block in order against a fresh server', { timeout: 180_000 }, async () => {
      const keysDir = mkdtempSync(join(workDir, 'keys-'));
      const { code, output } = await run(docScript(file, workDir), workDir, {
        // The server's own address (its issuer, http://localhost:<port>), as a user's is http://localhost:8080.
        SESAME: source.issuer,
        SESAME_DATA_DIR: source.dataDir,
        ...(target ? { DST: target.issuer, DST_DATA_DIR: target.dataDir } : {}),
        KEYS: keysDir,
        SMTP_RELAY: relay.host,
      });
      const failedAt = [...output.matchAll(/@@ (.*)$/gm)].pop()?.[1];
      const report = `block failed (last started: ${failedAt}), exit code ${code}:\n${output.slice(-6000)}`;
      expect(code, report).toBe(0);
      expect(failedAt, report).toBe(`${file}: all blocks ran`);
      // The SMTP example's test call reached the relay.
      if (file === 'docs/email.md') expect(relay.mails.map((m) => m.to)).toContain('you@example.com');
    });

    if (file === 'docs/export-import.md') {
      it('the person the guide moved signs in on the target with her old password', async () => {
        // The guide says so but cannot show it without a browser: walk the target's login pages.
        const app = await createWebApp(target!);
        const params = new URLSearchParams({ client_id: app.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope: 'openid' });
        const done = await signIn(new Agent(target!), `/oauth/v2/authorize?${params}`, { loginName: 'grace@acme.localhost', password: 'Correct-Horse-9' });
        expect(done.location, done.html?.slice(0, 2000)).toMatch(/^http:\/\/localhost:9999\/callback\?/);
        expect(responseParams(done.location!).get('code')).toBeTruthy();
        const tokens = await exchangeCode(target!, app, done.location!);
        expect(tokens.status).toBe(200);
        expect(tokens.claims.sub).toMatch(/^\d+$/);
      });
    }
  });
}
