import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createMachineClient, importOrgs } from './helpers/api.js';
import { Agent, codeFlowTokens, createHuman, createWebApp, signIn, uniqueName, type WebApp } from './helpers/oidc.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * The activity log: administrative changes, sign-ins and failed ones, lockouts and impersonations
 * are events written with the change, with who made it and from where; ZITADEL's ListEvents and the
 * per-object changes read them; no event holds a secret; the retention setting prunes them.
 */
let server: InProcessServer;
let web: WebApp;

const call = (method: string, path: string, body?: unknown, options: { token?: string; orgId?: string } = {}) =>
  api(server, method, path, { token: options.token ?? server.pat, body, orgId: options.orgId });

async function events(filter: Record<string, unknown>): Promise<any[]> {
  const res = await call('POST', '/admin/v1/events/_search', { asc: true, limit: 1000, ...filter });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.events ?? [];
}

const types = (list: any[]) => list.map((e) => e.type.type);

/** The instance administrator, made at the first start: by Sesame itself. */
async function adminId(): Promise<string> {
  const [made] = await events({ eventTypes: ['user.machine.added'], limit: 1 });
  expect(made.payload.userName).toBe('admin');
  expect(made.editor).toMatchObject({ userId: 'SYSTEM', service: 'system', displayName: 'System' });
  return made.aggregate.id;
}

beforeAll(async () => {
  server = await startInProcess({ env: { SESAME_ACTIVITY_RETENTION: '240h' } });
  web = await createWebApp(server);
});

afterAll(async () => {
  await server?.close();
});

describe('activity log', () => {
  it('records a person made, locked, unlocked and given a password by an administrator, with the administrator as editor and the address', async () => {
    const person = await createHuman(server);
    expect((await call('POST', `/management/v1/users/${person.userId}/_lock`, {})).status).toBe(200);
    expect((await call('POST', `/management/v1/users/${person.userId}/_unlock`, {})).status).toBe(200);
    expect((await call('POST', `/management/v1/users/${person.userId}/password`, { password: 'Another-Horse-7', noChangeRequired: true })).status).toBe(200);
    const found = await events({ aggregateId: person.userId });
    expect(types(found)).toEqual(['user.human.added', 'user.locked', 'user.unlocked', 'user.human.password.changed']);
    const admin = await adminId();
    for (const event of found) {
      expect(event.editor.userId).toBe(admin);
      expect(event.editor.service).toBe('management');
      expect(event.editor.address).toBe('127.0.0.1');
      expect(event.aggregate.type.type).toBe('user');
      expect(Number(event.sequence)).toBeGreaterThan(0);
    }
    // Numbered in commit order.
    const sequences = found.map((e) => Number(e.sequence));
    expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
    // No secret and no hash in any payload.
    const text = JSON.stringify(found);
    expect(text).not.toContain('Another-Horse-7');
    expect(text).not.toMatch(/\$argon2|\$2[aby]\$/);
  });

  it('records a sign-in with the person as editor and the browser address, and a wrong password as a failed check', async () => {
    const person = await createHuman(server);
    const agent = new Agent(server);
    const params = new URLSearchParams({ client_id: web.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope: 'openid' });
    const wrong = await signIn(agent, `/oauth/v2/authorize?${params}`, { loginName: person.loginName, password: 'not-the-password' });
    expect(wrong.location).toBeUndefined();
    await codeFlowTokens(server, web, person, 'openid');
    const found = await events({ aggregateId: person.userId, eventTypes: ['user.human.password.check.failed', 'user.human.signed.in'] });
    expect(types(found)).toEqual(['user.human.password.check.failed', 'user.human.signed.in']);
    for (const event of found) {
      expect(event.editor.userId).toBe(person.userId);
      expect(event.editor.service).toBe('login');
      expect(event.editor.address).toBe('127.0.0.1');
    }
    expect(found[1].payload).toMatchObject({ clientId: web.clientId, amr: expect.arrayContaining(['pwd']) });
    expect(JSON.stringify(found)).not.toContain(person.password);
  });

  it('records a sign-in with a name nobody has, and a sign-out with the browser address', async () => {
    const agent = new Agent(server);
    const params = new URLSearchParams({ client_id: web.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope: 'openid' });
    const nobody = `${uniqueName('nobody')}@example.com`;
    await signIn(agent, `/oauth/v2/authorize?${params}`, { loginName: nobody, password: 'whatever-1' });
    const failed = await events({ eventTypes: ['instance.signin.failed'] });
    expect(failed.at(-1)).toMatchObject({ editor: { service: 'login', address: '127.0.0.1' }, payload: { loginName: nobody, reason: 'unknown' } });
    const person = await createHuman(server);
    const { agent: browser } = await codeFlowTokens(server, web, person, 'openid');
    expect((await browser.follow('/oidc/v1/end_session')).status).toBe(200);
    const out = await events({ aggregateId: person.userId, eventTypes: ['user.human.signed.in', 'user.human.signed.out'] });
    expect(types(out)).toEqual(['user.human.signed.in', 'user.human.signed.out']);
    expect(out[1]).toMatchObject({ editor: { userId: person.userId, service: 'login', address: '127.0.0.1' } });
    expect(out[1].payload.sessionId).toBe(out[0].payload.sessionId);
  });

  it('records a lockout by wrong passwords', async () => {
    const orgId = (await call('POST', '/management/v1/orgs', { name: uniqueName('org') })).body.id as string;
    expect((await call('POST', '/management/v1/policies/lockout', { maxPasswordAttempts: '2' }, { orgId })).status).toBe(200);
    const person = await createHuman(server, { orgId });
    for (let i = 0; i < 2; i++) {
      const params = new URLSearchParams({ client_id: web.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope: 'openid' });
      await signIn(new Agent(server), `/oauth/v2/authorize?${params}`, { loginName: person.loginName, password: 'wrong-password' });
    }
    const found = await events({ aggregateId: person.userId, asc: true });
    expect(types(found)).toEqual(expect.arrayContaining(['user.human.password.check.failed', 'user.locked']));
    expect(found.find((e) => e.type.type === 'user.locked').editor.userId).toBe(person.userId);
  });

  it('records projects, apps and org changes, and answers their changes to whoever may read them', async () => {
    const project = await call('POST', '/management/v1/projects', { name: uniqueName('project') });
    expect(project.status).toBe(200);
    const projectId = project.body.id as string;
    const app = await call('POST', `/management/v1/projects/${projectId}/apps/api`, { name: 'api', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' });
    expect(app.status).toBe(200);
    const secret = app.body.clientSecret as string;
    expect((await call('POST', `/management/v1/projects/${projectId}/roles`, { roleKey: 'reader', displayName: 'Reader' })).status).toBe(200);

    const projectChanges = await call('POST', `/management/v1/projects/${projectId}/changes/_search`, { query: { asc: true } });
    expect(projectChanges.status).toBe(200);
    expect(projectChanges.body.result.map((c: any) => c.eventType.key)).toEqual(['EventTypes.project.added', 'EventTypes.project.application.added', 'EventTypes.project.role.added']);
    const appChanges = await call('POST', `/management/v1/projects/${projectId}/apps/${app.body.appId}/changes/_search`, {});
    expect(appChanges.body.result.map((c: any) => c.eventType.key)).toEqual(['EventTypes.project.application.added']);
    expect(appChanges.body.result[0].editorPreferredLoginName).toMatch(/@/);
    expect(JSON.stringify(projectChanges.body)).not.toContain(secret);

    const orgChanges = await call('POST', '/management/v1/orgs/me/changes/_search', { query: { limit: 5 } });
    expect(orgChanges.status).toBe(200);
  });

  it('records an impersonation before its tokens are answered', async () => {
    expect((await call('PUT', '/admin/v1/policies/security', { enableImpersonation: true })).status).toBe(200);
    expect((await call('PUT', '/v2/features/instance', { oidcTokenExchange: true })).status).toBe(200);
    const exchanger = await createWebApp(server, { grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'] });
    const actor = await createMachineClient(server, uniqueName('impersonator'));
    expect((await call('POST', '/management/v1/orgs/me/members', { userId: actor.userId, roles: ['ORG_END_USER_IMPERSONATOR'] })).status).toBe(200);
    const subject = await createHuman(server);
    const post = (params: Record<string, string>, who: { clientId: string; clientSecret: string }) =>
      fetch(`${server.url}/oauth/v2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${who.clientId}:${who.clientSecret}`).toString('base64')}` },
        body: new URLSearchParams(params).toString(),
      });
    const cc = (await (await post({ grant_type: 'client_credentials', scope: `openid urn:zitadel:iam:org:project:id:${exchanger.projectId}:aud` }, actor)).json()) as { access_token: string };
    const exchange = () =>
      post(
        {
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: subject.userId,
          subject_token_type: 'urn:zitadel:params:oauth:token-type:user_id',
          actor_token: cc.access_token,
          actor_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        },
        exchanger,
      );
    const res = await exchange();
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(200);
    const found = await events({ aggregateId: subject.userId, eventTypes: ['user.impersonated'] });
    expect(found).toHaveLength(1);
    expect(found[0].editor).toMatchObject({ userId: actor.userId, service: 'oidc' });
    expect(found[0].payload).toMatchObject({ actorUserId: actor.userId, clientId: exchanger.clientId });
    expect(JSON.stringify(found)).not.toContain(String(body.access_token));
    // Refused (the policy off again): no token, and no event.
    expect((await call('PUT', '/admin/v1/policies/security', { enableImpersonation: false })).status).toBe(200);
    expect((await exchange()).status).toBe(403);
    expect(await events({ aggregateId: subject.userId, eventTypes: ['user.impersonated'] })).toHaveLength(1);
    const policy = await events({ eventTypes: ['instance.policy.security.changed'] });
    expect(policy.at(-1).payload).toEqual({ changed: ['enableImpersonation'] });
  });

  it('records an import as an import, and what it added, by whoever imported', async () => {
    const orgId = uniqueName('imported');
    const res = await importOrgs(server, [
      { orgId, org: { name: orgId }, humanUsers: [{ userId: `${orgId}-u`, user: { userName: 'plain', profile: { firstName: 'A', lastName: 'B' }, email: { email: 'p@example.com' } } }] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const found = await events({ resourceOwner: orgId });
    expect(types(found)).toEqual(expect.arrayContaining(['org.added', 'org.imported', 'user.human.added']));
    const admin = await adminId();
    expect(found.every((e) => e.editor.userId === admin && e.editor.service === 'admin')).toBe(true);
  });

  it('records a client that registered itself as nobody known, from its address, and its removal by the holder of its token', async () => {
    const projectId = (await call('POST', '/management/v1/projects', { name: uniqueName('registered') })).body.id as string;
    const orgId = (await call('GET', '/management/v1/orgs/me')).body.org.id as string;
    const on = await call('PUT', '/admin/v1/settings/dynamic_client_registration', { enabled: true, orgId, projectId, allowUnauthenticated: true, registrationsPerAddressPerHour: 10 });
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    const res = await fetch(`${server.url}/oauth/v2/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['https://rp.example/cb'] }) });
    const client = (await res.json()) as { client_id: string; registration_access_token: string };
    expect(res.status).toBe(201);
    const gone = await fetch(`${server.url}/oauth/v2/register/${client.client_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${client.registration_access_token}` } });
    expect(gone.status).toBe(204);
    const found = await events({ aggregateId: projectId, eventTypes: ['project.application.added', 'project.application.removed'] });
    expect(found.map((e) => [e.type.type, e.payload.clientId])).toEqual([
      ['project.application.added', client.client_id],
      ['project.application.removed', client.client_id],
    ]);
    // protojson leaves the empty user id out.
    for (const event of found) expect(event.editor).toEqual({ service: 'registration', address: '127.0.0.1' });
    expect(JSON.stringify(found)).not.toContain(client.registration_access_token);
  });

  it('filters by editor, type, aggregate type and time, pages by sequence, and refuses bad filters', async () => {
    const all = await events({});
    expect(all.length).toBeGreaterThan(5);
    const newestFirst = (await call('POST', '/admin/v1/events/_search', { limit: 3 })).body.events;
    expect(newestFirst.map((e: any) => Number(e.sequence))).toEqual(
      all
        .slice(-3)
        .map((e) => Number(e.sequence))
        .reverse(),
    );
    const after = await events({ sequence: all[2].sequence, limit: 2 });
    expect(after.map((e) => e.sequence)).toEqual([all[3].sequence, all[4].sequence]);
    const orgs = await events({ aggregateTypes: ['org'] });
    expect(orgs.every((e) => e.aggregate.type.type === 'org')).toBe(true);
    const future = await events({ range: { since: new Date(server.clock.now() + 3_600_000).toISOString() } });
    expect(future).toHaveLength(0);
    expect((await call('POST', '/admin/v1/events/_search', { limit: 5000 })).status).toBe(400);
    expect((await call('POST', '/admin/v1/events/_search', { range: { since: 'yesterday' } })).status).toBe(400);
  });

  it('is read only by whoever may read the instance events; changes of an object take the right to read it', async () => {
    const orgId = (await call('POST', '/management/v1/orgs', { name: uniqueName('org') })).body.id as string;
    const person = await createHuman(server, { orgId });
    const machine = await call('POST', '/management/v1/users/machine', { userName: uniqueName('m'), name: 'm' }, { orgId });
    expect(machine.status).toBe(200);
    expect((await call('POST', '/management/v1/orgs/me/members', { userId: machine.body.userId, roles: ['ORG_OWNER'] }, { orgId })).status).toBe(200);
    const pat = await call('POST', `/management/v1/users/${machine.body.userId}/pats`, {}, { orgId });
    expect(pat.status).toBe(200);
    const token = pat.body.token as string;
    expect((await call('POST', '/admin/v1/events/_search', {}, { token })).status).toBe(403);
    const changes = await call('POST', `/management/v1/users/${person.userId}/changes/_search`, {}, { token, orgId });
    expect(changes.status).toBe(200);
    expect(changes.body.result.map((c: any) => c.eventType.key)).toEqual(['EventTypes.user.human.added']);
    // Another org's person is not found through this org.
    const stranger = await createHuman(server);
    expect((await call('POST', `/management/v1/users/${stranger.userId}/changes/_search`, {}, { token, orgId })).status).toBe(404);
  });

  it('prunes events older than the retention setting at the sweep', async () => {
    const person = await createHuman(server);
    expect((await events({ aggregateId: person.userId })).length).toBe(1);
    server.clock.advance(241 * 3_600_000);
    await server.tick();
    expect(await events({ aggregateId: person.userId })).toHaveLength(0);
    const fresh = await createHuman(server);
    expect(types(await events({ aggregateId: fresh.userId }))).toEqual(['user.human.added']);
  });
});
