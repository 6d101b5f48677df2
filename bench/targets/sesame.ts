import { generateKeyPairSync } from 'node:crypto';
import { api, createApiApp, createMachineClient } from '../../test/helpers/api.js';
import { Agent, createHuman, createWebApp, signIn } from '../../test/helpers/oidc.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import type { Alg, BenchOptions } from '../args.js';
import { discoverEndpoints, type PreparedTarget, type TargetFactory } from './target.js';

/**
 * Starts Sesame (dist/main.js) on a temp data dir with the signing algorithm a scenario needs,
 * and provisions the bench clients through the management API: a machine user per token format
 * and an API app that is the tokens' audience and introspects them.
 */
export class SesameFactory implements TargetFactory {
  private server: TestServer | undefined;
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
  ) {}

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
    const server = await startServer({ env });
    this.server = server;
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
    const target: PreparedTarget = {
      name: this.name,
      issuer: server.issuer,
      endpoints: await discoverEndpoints(server.issuer),
      pid: server.process.pid,
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
      notes: [`${this.name} ${alg}: ${httpThreads} HTTP thread(s), signer ${signer}, ${workers} worker thread(s), durability ${this.options.durability ?? 'flush'}, metrics ${this.metrics ? 'on' : 'off'}`],
    };
    this.current = { alg, target };
    return target;
  }

  async close(): Promise<void> {
    this.current = undefined;
    const server = this.server;
    this.server = undefined;
    await server?.close();
  }
}

