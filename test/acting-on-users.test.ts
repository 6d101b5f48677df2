import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, basicAuth, createMachineClient } from './helpers/api.js';
import { createHuman, uniqueName } from './helpers/oidc.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * Issue 22, finding 1: acting on a user (credentials, state, identity, metadata, grants, removal,
 * impersonation) needs a right of every scope the user administers (domain/permissions.ts
 * missingToActOn). Before, an org owner or user manager could set an instance owner's password,
 * sign in as them and make themselves instance owner, or lock, deactivate and delete them; an org
 * owner could impersonate the instance owner by granting a machine user ORG_ADMIN_IMPERSONATOR.
 */
let server: InProcessServer;
let adminId: string;
let humanOwner: { userId: string };
let plain: { userId: string };
let orgOwner: { userId: string; pat: string };
let userManager: { userId: string; pat: string };
let project: string;

async function memberWithPat(roles: string[]): Promise<{ userId: string; pat: string }> {
  const user = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: uniqueName('admin'), name: 'Admin' } });
  expect((await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: user.body.userId, roles } })).status).toBe(200);
  const pat = await api(server, 'POST', `/management/v1/users/${user.body.userId}/pats`, { token: server.pat, body: {} });
  return { userId: user.body.userId, pat: pat.body.token };
}

/** Every route that acts on an existing user, with a body it would accept. */
function actions(userId: string, human: boolean): [string, string, object][] {
  return [
    ['POST', `/management/v1/users/${userId}/_lock`, {}],
    ['POST', `/management/v1/users/${userId}/_deactivate`, {}],
    ['POST', `/management/v1/users/${userId}/_unlock`, {}],
    ['POST', `/management/v1/users/${userId}/_reactivate`, {}],
    ['POST', `/management/v1/users/${userId}/metadata/role`, { value: Buffer.from('x').toString('base64') }],
    ['POST', `/management/v1/users/${userId}/grants`, { projectId: project, roleKeys: [] }],
    ...(human
      ? ([['POST', `/management/v1/users/${userId}/password`, { password: 'Taken-Over-123', noChangeRequired: true }]] as [string, string, object][])
      : ([
          ['PUT', `/management/v1/users/${userId}/secret`, {}],
          ['POST', `/management/v1/users/${userId}/pats`, {}],
          ['POST', `/management/v1/users/${userId}/keys`, { type: 'KEY_TYPE_JSON' }],
        ] as [string, string, object][])),
    ['DELETE', `/management/v1/users/${userId}`, {}],
  ];
}

beforeAll(async () => {
  server = await startInProcess();
  const members = await api(server, 'POST', '/admin/v1/members/_search', { token: server.pat, body: {} });
  adminId = (members.body.result as { userId: string; roles: string[] }[]).find((m) => m.roles.includes('IAM_OWNER'))!.userId;
  humanOwner = await createHuman(server);
  expect((await api(server, 'POST', '/admin/v1/members', { token: server.pat, body: { userId: humanOwner.userId, roles: ['IAM_OWNER'] } })).status).toBe(200);
  plain = await createHuman(server);
  orgOwner = await memberWithPat(['ORG_OWNER']);
  userManager = await memberWithPat(['ORG_USER_MANAGER']);
  project = (await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name: uniqueName('roles') } })).body.id;
});
afterAll(async () => {
  await server?.close();
});

describe('org-level administrators cannot act on instance owners', () => {
  it.each([
    ['ORG_OWNER', () => orgOwner.pat],
    ['ORG_USER_MANAGER', () => userManager.pat],
  ])('%s is refused every action on a human instance owner and on the bootstrap admin', async (_role, pat) => {
    for (const [target, human] of [
      [humanOwner.userId, true],
      [adminId, false],
    ] as const) {
      for (const [method, path, body] of actions(target, human)) {
        const res = await api(server, method, path, { token: pat(), body });
        expect({ method, path, status: res.status, body: res.body.code === 7 ? 'PermissionDenied' : res.body }).toEqual({ method, path, status: 403, body: 'PermissionDenied' });
      }
    }
    // Nothing happened to either: still active instance owners.
    for (const id of [humanOwner.userId, adminId]) {
      const user = await api(server, 'GET', `/management/v1/users/${id}`, { token: server.pat });
      expect(user.body.user.state).toBe('USER_STATE_ACTIVE');
    }
    const owners = await api(server, 'POST', '/admin/v1/members/_search', { token: server.pat, body: {} });
    expect((owners.body.result as { userId: string }[]).map((m) => m.userId)).toEqual(expect.arrayContaining([adminId, humanOwner.userId]));
  });

  it('a user manager is refused on an org owner; the org owner may act on its fellow org owner and on people without roles', async () => {
    const res = await api(server, 'POST', `/management/v1/users/${orgOwner.userId}/_lock`, { token: userManager.pat, body: {} });
    expect(res.status).toBe(403);
    const secondOwner = await memberWithPat(['ORG_OWNER']);
    expect((await api(server, 'POST', `/management/v1/users/${secondOwner.userId}/metadata/k`, { token: orgOwner.pat, body: { value: 'eA==' } })).status).toBe(200);
    for (const pat of [orgOwner.pat, userManager.pat]) {
      const set = await api(server, 'POST', `/management/v1/users/${plain.userId}/password`, { token: pat, body: { password: 'Fresh-Passw0rd-1', noChangeRequired: true } });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
    }
    // The instance owner may still act on its fellow instance owner.
    expect((await api(server, 'POST', `/management/v1/users/${humanOwner.userId}/metadata/k`, { token: server.pat, body: { value: 'eA==' } })).status).toBe(200);
  });
});

describe('impersonation takes the right to act on the subject', () => {
  it("an org owner's machine user with ORG_ADMIN_IMPERSONATOR cannot impersonate the instance owner, only its org's users", async () => {
    expect((await api(server, 'PUT', '/v2/features/instance', { token: server.pat, body: { oidcTokenExchange: true } })).status).toBe(200);
    expect((await api(server, 'PUT', '/admin/v1/policies/security', { token: server.pat, body: { enableImpersonation: true } })).status).toBe(200);
    // All done with the org owner's own token: an app, a machine user, the impersonator role.
    const app = await api(server, 'POST', `/management/v1/projects/${project}/apps/oidc`, {
      token: orgOwner.pat,
      body: { name: uniqueName('te'), redirectUris: ['https://rp.example/cb'], grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'] },
    });
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    const machine = await api(server, 'POST', '/management/v1/users/machine', { token: orgOwner.pat, body: { userName: uniqueName('imp'), name: 'Impersonator' } });
    expect((await api(server, 'POST', '/management/v1/orgs/me/members', { token: orgOwner.pat, body: { userId: machine.body.userId, roles: ['ORG_ADMIN_IMPERSONATOR'] } })).status).toBe(200);
    const secret = await api(server, 'PUT', `/management/v1/users/${machine.body.userId}/secret`, { token: orgOwner.pat, body: {} });
    expect(secret.status).toBe(200);
    const token = async () => {
      const res = await fetch(`${server.url}/oauth/v2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(secret.body.clientId, secret.body.clientSecret) },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: `openid urn:zitadel:iam:org:project:id:${project}:aud` }),
      });
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const exchange = async (subject: string) => {
      const res = await fetch(`${server.url}/oauth/v2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(app.body.clientId, app.body.clientSecret) },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: subject,
          subject_token_type: 'urn:zitadel:params:oauth:token-type:user_id',
          actor_token: await token(),
          actor_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    for (const ownerId of [humanOwner.userId, adminId]) {
      const refused = await exchange(ownerId);
      expect(refused.status).toBe(403);
      expect(refused.body.error_description).toMatch(/impersonation\.admin on instance/);
    }
    // The org's own people it may impersonate (and their fellow org owners: the role says admin).
    expect((await exchange(plain.userId)).status).toBe(200);
    expect((await exchange(orgOwner.userId)).status).toBe(200);
  });

  it("a machine user made an instance-wide impersonator by the instance owner may impersonate the instance owner, through the instance's own app", async () => {
    const impersonator = await createMachineClient(server, uniqueName('iam-imp'));
    expect((await api(server, 'POST', '/admin/v1/members', { token: server.pat, body: { userId: impersonator.userId, roles: ['IAM_ADMIN_IMPERSONATOR'] } })).status).toBe(200);
    // An app of the management project: instance-wide power travels through the instance's own apps only.
    const management = server.app.ctx.instance.managementProjectId;
    const app = await api(server, 'POST', `/management/v1/projects/${management}/apps/oidc`, {
      token: server.pat,
      body: { name: uniqueName('te'), redirectUris: ['https://rp.example/cb'], grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'] },
    });
    const cc = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(impersonator.clientId, impersonator.clientSecret) },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: `openid urn:zitadel:iam:org:project:id:${management}:aud` }),
    });
    const res = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(app.body.clientId, app.body.clientSecret) },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: humanOwner.userId,
        subject_token_type: 'urn:zitadel:params:oauth:token-type:user_id',
        actor_token: ((await cc.json()) as { access_token: string }).access_token,
        actor_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      }),
    });
    expect(res.status).toBe(200);
  });
});
