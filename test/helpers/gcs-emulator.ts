import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './server.js';
import { fileURLToPath } from 'node:url';

/**
 * A real Cloud Storage emulator for the tests: the one inside firebase-tools, started in-process
 * through its EmulatorRegistry. firebase-tools is not a devDependency (its ~620 packages and the
 * native re2 build would weigh on every `npm install`): it is pinned in its own manifest and lock
 * file, test/gcs-emulator/, installed there with `npm ci --ignore-scripts` (by .ci/run, or here when
 * missing). The storage emulator needs none of the install scripts (the native re2 is an optional
 * regex engine of superstatic, the Hosting emulator, which falls back without it).
 * Only the Firebase web API (`/v0/…`) evaluates security rules, which needs a Java runtime; the GCS
 * JSON API that `@google-cloud/storage` uses never does, so the rules runtime and manager are
 * replaced by no-ops. Each instance keeps its blobs in its own temp dir. Buckets appear on first write.
 */
const emulatorDir = fileURLToPath(new URL('../gcs-emulator/', import.meta.url));

/** Installs test/gcs-emulator/ from its lock file when firebase-tools is not there yet. */
export function ensureGcsEmulatorInstalled(): void {
  if (existsSync(join(emulatorDir, 'node_modules', 'firebase-tools', 'package.json'))) return;
  const npm = process.env.npm_execpath;
  const [command, args] = npm?.endsWith('.js') ? [process.execPath, [npm]] : ['npm', []];
  execFileSync(command, [...args, 'ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: emulatorDir,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 300_000,
  });
}

ensureGcsEmulatorInstalled();
const require = createRequire(join(emulatorDir, 'package.json'));

interface EmulatorArgs {
  projectId: string;
  host: string;
  port: number;
  rules: unknown[];
  auto_download?: boolean;
}

interface StorageEmulatorLike {
  getInfo(): { host: string; port: number };
}

type StorageEmulatorClass = new (
  args: EmulatorArgs,
) => StorageEmulatorLike & {
  getPersistenceTmpDir(): string;
  createRulesManager(rules: unknown): unknown;
};

const { StorageEmulator } = require('firebase-tools/lib/emulator/storage/index.js') as { StorageEmulator: StorageEmulatorClass };
const { EmulatorRegistry } = require('firebase-tools/lib/emulator/registry.js') as {
  EmulatorRegistry: { start(instance: unknown): Promise<void>; stop(name: string): Promise<void> };
};

export interface GcsEmulator {
  /** For STORAGE_EMULATOR_HOST: http://127.0.0.1:<port>. */
  readonly host: string;
  readonly port: number;
  readonly projectId: string;
  stop(): Promise<void>;
}

const NO_RULES = {
  start: async () => [],
  stop: async () => {},
  getRuleset: () => undefined,
};

export async function startGcsEmulator(projectId = 'demo-sesame'): Promise<GcsEmulator> {
  const dir = mkdtempSync(join(tmpdir(), 'sesame-gcs-'));
  class IsolatedStorageEmulator extends StorageEmulator {
    override getPersistenceTmpDir(): string {
      return dir;
    }
    override createRulesManager(): unknown {
      return NO_RULES;
    }
  }
  const port = await freePort();
  const emulator = new IsolatedStorageEmulator({ projectId, host: '127.0.0.1', port, rules: [], auto_download: false });
  (emulator as unknown as { _rulesRuntime: unknown })._rulesRuntime = { start: async () => {}, stop: async () => {} };
  await EmulatorRegistry.start(emulator);
  return {
    host: `http://127.0.0.1:${port}`,
    port,
    projectId,
    async stop() {
      await EmulatorRegistry.stop('storage');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A syntactically valid service-account key file, base64, as the export/import requests carry it. */
export function fakeServiceAccountBase64(projectId = 'demo-sesame'): string {
  const key = {
    type: 'service_account',
    project_id: projectId,
    private_key_id: 'test',
    private_key: '-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----\n',
    client_email: `sesame-migration@${projectId}.iam.gserviceaccount.com`,
    client_id: '1',
    token_uri: 'https://oauth2.googleapis.com/token',
  };
  return Buffer.from(JSON.stringify(key)).toString('base64');
}
