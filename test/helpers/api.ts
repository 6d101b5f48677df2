import type { ServerAddress } from './server.js';

/** Small JSON client for the provisioning API. */
export interface ApiResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function api<T = any>(
  server: Pick<ServerAddress, 'url'>,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; orgId?: string; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.orgId) headers['x-zitadel-orgid'] = options.orgId;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const res = await fetch(server.url + path, { method, headers, body });
  const text = await res.text();
  // An in-process server on PostgreSQL: its main thread's copies (what a test reads as app.ctx) take
  // the change the answer reports before the test goes on, as a request to that thread would.
  await (server as { app?: { caughtUp?: () => Promise<void> } }).app?.caughtUp?.();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** Creates a machine user with a client secret in the default org; returns its credentials. */
export async function createMachineClient(
  server: ServerAddress,
  userName: string,
  accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' | 'ACCESS_TOKEN_TYPE_JWT' = 'ACCESS_TOKEN_TYPE_BEARER',
): Promise<{ userId: string; clientId: string; clientSecret: string }> {
  const created = await api(server, 'POST', '/management/v1/users/machine', {
    token: server.pat,
    body: { userName, name: userName, accessTokenType },
  });
  if (created.status !== 200) throw new Error(`add machine user: ${created.status} ${JSON.stringify(created.body)}`);
  const secret = await api(server, 'PUT', `/management/v1/users/${created.body.userId}/secret`, { token: server.pat, body: {} });
  if (secret.status !== 200) throw new Error(`generate secret: ${secret.status} ${JSON.stringify(secret.body)}`);
  return { userId: created.body.userId, clientId: secret.body.clientId, clientSecret: secret.body.clientSecret };
}

/** Creates a project with an API app (Basic auth); returns ids and the app's credentials. */
export async function createApiApp(server: ServerAddress, name: string): Promise<{ projectId: string; appId: string; clientId: string; clientSecret: string }> {
  const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name } });
  if (project.status !== 200) throw new Error(`add project: ${project.status} ${JSON.stringify(project.body)}`);
  const app = await api(server, 'POST', `/management/v1/projects/${project.body.id}/apps/api`, {
    token: server.pat,
    body: { name: `${name} API`, authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' },
  });
  if (app.status !== 200) throw new Error(`add api app: ${app.status} ${JSON.stringify(app.body)}`);
  return { projectId: project.body.id, appId: app.body.appId, clientId: app.body.clientId, clientSecret: app.body.clientSecret };
}

/** POST /admin/v1/import of inline orgs (`dataOrgs`) as the bootstrap admin. */
export function importOrgs(server: Pick<ServerAddress, 'url' | 'pat'>, orgs: Record<string, unknown>[]): Promise<ApiResult> {
  return api(server, 'POST', '/admin/v1/import', { token: server.pat, body: { timeout: '1m', dataOrgs: { orgs } } });
}

/** An `Authorization: Basic` header value for client credentials (RFC 6749 §2.3.1: form-encoded id and secret). */
export function basicAuth(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** A form POST (the OAuth endpoints) with an optional Authorization header: the status and the JSON body. */
export async function postForm(server: Pick<ServerAddress, 'url'>, path: string, body: Record<string, string>, auth?: string): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
    body: new URLSearchParams(body).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
}
