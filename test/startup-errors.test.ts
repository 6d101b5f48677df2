import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startInProcess } from './helpers/in-process.js';
import { startServer } from './helpers/server.js';
import { testStoreEnv } from './helpers/postgres.js';

/**
 * Every way the data dir can be unusable ends start-up with one line naming the setting, the value
 * and the reason, and exit code 2: not a directory, cannot be created (`/proc/x` used to hang
 * forever), not writable. Every start prints a banner with the address, issuer, data dir and PAT.
 */
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'sesame-startup-'));
chmodSync(scratch, 0o755);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs the server to its exit (bounded), as `uid` when given. */
function run(dataDir: string, options: { uid?: number; env?: Record<string, string> } = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
      env: { ...process.env, SESAME_LOG_LEVEL: 'error', SESAME_WORKERS: '1', ...options.env },
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no exit within 20 s: ${stderr}`));
    }, 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('start-up errors name SESAME_DATA_DIR, the value and the reason (exit 2)', () => {
  it('a data dir that is a file', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, 'x');
    const { code, stderr } = await run(file);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(`sesame: SESAME_DATA_DIR (--data-dir) = ${JSON.stringify(file)}: ${file} is not a directory`);
  });

  it('a data dir under a file', async () => {
    const { code, stderr } = await run(join(scratch, 'a-file', 'data'));
    expect(code).toBe(2);
    expect(stderr).toMatch(/SESAME_DATA_DIR \(--data-dir\) = ".*a-file\/data": cannot read .*a-file\/data: a part of the path is a file, not a directory \(ENOTDIR\)/);
  });

  it('a data dir the file system will not create (it used to hang)', async () => {
    const { code, stderr } = await run('/proc/sesame-data');
    expect(code).toBe(2);
    expect(stderr).toMatch(/SESAME_DATA_DIR \(--data-dir\) = "\/proc\/sesame-data": cannot create \/proc\/sesame-data: /);
  });

  it('a data dir this user cannot write', async () => {
    const dir = join(scratch, 'not-yours');
    mkdirSync(dir);
    const asRoot = process.getuid?.() === 0;
    if (!asRoot) {
      chmodSync(dir, 0o500);
      const { code, stderr } = await run(dir);
      expect(code).toBe(2);
      expect(stderr).toMatch(/SESAME_DATA_DIR \(--data-dir\) = ".*not-yours": not writable \(this process runs as uid \d+\): permission denied \(EACCES\)/);
      return;
    }
    // Root may write anywhere: run the server as nobody on a root-owned dir, where nobody can read
    // the checkout; otherwise a directory root itself cannot write files into (sysfs).
    const nobodyCanRun = spawnSync(process.execPath, ['-e', `require('fs').accessSync(${JSON.stringify(MAIN)})`], { uid: 65534, gid: 65534 }).status === 0;
    if (nobodyCanRun) {
      const { code, stderr } = await run(dir, { uid: 65534 });
      expect(code).toBe(2);
      expect(stderr).toMatch(/SESAME_DATA_DIR \(--data-dir\) = ".*not-yours": not writable \(this process runs as uid 65534\): permission denied \(EACCES\)/);
    } else {
      const { code, stderr } = await run('/sys/kernel');
      expect(code).toBe(2);
      expect(stderr).toMatch(/SESAME_DATA_DIR \(--data-dir\) = "\/sys\/kernel": cannot write files there: /);
    }
  });
});

describe('a lost master key file', () => {
  it('is not replaced by a new key for a data dir with sealed data: exit 2 naming SESAME_MASTERKEY', async () => {
    const dataDir = join(scratch, 'lost-key');
    const first = await startInProcess({ dataDir });
    await first.stop();
    rmSync(join(dataDir, 'masterkey'));
    // Where the first start sealed its data: the data dir, or with SESAME_TEST_STORE=postgres its database.
    const { code, stderr } = await run(dataDir, { env: await testStoreEnv(dataDir, undefined) });
    expect(code).toBe(2);
    expect(stderr).toMatch(/SESAME_MASTERKEY \(--master-key\): .*masterkey is missing and SESAME_MASTERKEY is not set/);
    expect(existsSync(join(dataDir, 'masterkey'))).toBe(false);
  });
});

describe('start-up banner', () => {
  it('says where Sesame listens, its issuer, data dir and admin PAT, on every start', async () => {
    const dataDir = join(scratch, 'banner');
    const first = await startServer({ dataDir });
    const pat = `admin PAT  ${join(dataDir, 'admin.pat')}\n`;
    // The banner follows the log line the helper waits for: wait for it (bounded).
    await expect.poll(() => first.logs(), { timeout: 10_000 }).toContain(pat);
    const banner = first.logs();
    await first.close({ keepData: true });
    expect(banner).toContain(`Sesame is listening on http://127.0.0.1:${first.port}`);
    expect(banner).toContain(`issuer     ${first.issuer}`);
    expect(banner).toContain(`data dir   ${dataDir}`);
    const second = await startServer({ dataDir });
    try {
      await expect.poll(() => second.logs(), { timeout: 10_000 }).toContain(pat);
    } finally {
      await second.close();
    }
  });
});
