import type { ChildProcess } from 'node:child_process';
import { startReadyChild, stopChild } from './child.js';
import { fileURLToPath } from 'node:url';
import type { Alg, BenchOptions } from '../args.js';
import { discoverEndpoints, type PreparedTarget, type TargetFactory } from './target.js';

/** Starts the ceiling (ceiling-server.ts) once; it serves every algorithm, one client per algorithm. */
const SCRIPT = fileURLToPath(new URL('./ceiling-server.js', import.meta.url));

interface Ready {
  issuer: string;
  durability: string;
  secret: string;
  clients: { opaque: string; introspect: string; jwt: Record<Alg, string> };
}

export class CeilingFactory implements TargetFactory {
  readonly name = 'ceiling';
  private child: ChildProcess | undefined;
  private base: { ready: Ready; target: Omit<PreparedTarget, 'ccJwt'> } | undefined;

  constructor(private readonly options: Pick<BenchOptions, 'durability'>) {}

  async open(alg: Alg): Promise<PreparedTarget> {
    if (!this.base) this.base = await this.start();
    const { ready, target } = this.base;
    return { ...target, ccJwt: { client: { id: ready.clients.jwt[alg], secret: ready.secret }, body: 'grant_type=client_credentials&scope=openid' } };
  }

  private async start() {
    const { child, ready } = await startReadyChild<Ready>('the ceiling', [SCRIPT], { CEILING_DURABILITY: this.options.durability ?? 'flush' });
    this.child = child;
    const opaque = { client: { id: ready.clients.opaque, secret: ready.secret }, body: 'grant_type=client_credentials&scope=openid' };
    const target: Omit<PreparedTarget, 'ccJwt'> = {
      name: this.name,
      issuer: ready.issuer,
      endpoints: await discoverEndpoints(ready.issuer),
      pid: child.pid,
      ccOpaque: opaque,
      introspector: { id: ready.clients.introspect, secret: ready.secret },
      notes: [`ceiling: uWS + node:crypto + lmdb doing only each scenario's irreducible work, JWTs signed on the event loop, durability ${ready.durability}`],
    };
    return { ready, target };
  }

  async close(): Promise<void> {
    this.base = undefined;
    await stopChild(this.child);
  }
}
