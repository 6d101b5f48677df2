import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Alg } from '../args.js';
import { discoverEndpoints, type PreparedTarget, type TargetFactory } from './target.js';

/** Starts the oidc-provider peer once; it serves every algorithm through its resource indicators. */
const SCRIPT = fileURLToPath(new URL('./oidc-provider-server.js', import.meta.url));

export class OidcProviderFactory implements TargetFactory {
  readonly name = 'oidc-provider';
  private child: ChildProcess | undefined;
  private base: Omit<PreparedTarget, 'ccJwt'> & { ccClient: { id: string; secret: string } } | undefined;

  async open(alg: Alg): Promise<PreparedTarget> {
    if (!this.base) this.base = await this.start();
    const { ccClient, ...base } = this.base;
    return { ...base, ccJwt: { client: ccClient, body: `grant_type=client_credentials&scope=api&resource=${encodeURIComponent(`urn:bench:${alg}`)}` } };
  }

  private async start() {
    const child = spawn(process.execPath, ['--no-warnings', SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' } });
    this.child = child;
    let output = '';
    const info = await new Promise<{ issuer: string; ccClient: { id: string; secret: string }; introspector: { id: string; secret: string } }>(
      (resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`oidc-provider did not start:\n${output}`)), 20_000);
        child.stderr!.on('data', (d) => (output += d));
        child.stdout!.on('data', (d) => {
          output += d;
          const line = output.split('\n').find((l) => l.includes('"ready":true'));
          if (line) {
            clearTimeout(timer);
            resolve(JSON.parse(line));
          }
        });
        child.once('exit', (code) => reject(new Error(`oidc-provider exited with ${code}:\n${output}`)));
      },
    );
    return {
      name: this.name,
      issuer: info.issuer,
      endpoints: await discoverEndpoints(info.issuer),
      pid: child.pid,
      ccClient: info.ccClient,
      ccOpaque: { client: info.ccClient, body: 'grant_type=client_credentials&scope=api' },
      introspector: info.introspector,
      notes: ['oidc-provider runs with its default in-memory adapter (no persistence); JWT access tokens are not introspectable there'],
    };
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}
