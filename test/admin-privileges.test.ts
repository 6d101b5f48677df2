import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, importOrgs } from './helpers/api.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/** Privilege boundaries of the provisioning API that go beyond one permission check. */
let server: InProcessServer;
beforeAll(async () => {
  server = await startInProcess();
});
afterAll(async () => {
  await server?.close();
});

describe('privilege boundaries of the provisioning API', () => {
  it('does not let an org owner mint credentials for a user with instance roles', async () => {
    const owner = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: 'org-owner', name: 'Org owner' } });
    await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: owner.body.userId, roles: ['ORG_OWNER'] } });
    const ownerPat = (await api(server, 'POST', `/management/v1/users/${owner.body.userId}/pats`, { token: server.pat, body: {} })).body.token as string;
    const members = await api(server, 'POST', '/admin/v1/members/_search', { token: server.pat, body: {} });
    const admin = (members.body.result as { userId: string; roles: string[] }[]).find((m) => m.roles.includes('IAM_OWNER'))!.userId;
    for (const [method, path] of [
      ['POST', `/management/v1/users/${admin}/pats`],
      ['PUT', `/management/v1/users/${admin}/secret`],
      ['POST', `/management/v1/users/${admin}/keys`],
    ] as const) {
      const res = await api(server, method, path, { token: ownerPat, body: { type: 'KEY_TYPE_JSON' } });
      expect({ path, status: res.status }).toEqual({ path, status: 403 });
    }
    // Its own org's ordinary machine users are still its to manage.
    const worker = await api(server, 'POST', '/management/v1/users/machine', { token: ownerPat, body: { userName: 'worker', name: 'Worker' } });
    expect((await api(server, 'POST', `/management/v1/users/${worker.body.userId}/pats`, { token: ownerPat, body: {} })).status).toBe(200);
  });

  it("lets an org owner mint credentials for a machine user that is a member of the org's own project", async () => {
    // Project members come in through an import (the API has no project member endpoints).
    const orgId = `owned-${Date.now().toString(36)}`;
    const imported = await importOrgs(server, [
      {
        orgId,
        org: { name: orgId },
        machineUsers: [
          { userId: `${orgId}-owner`, user: { userName: 'owner', name: 'Owner' } },
          { userId: `${orgId}-worker`, user: { userName: 'worker', name: 'Worker' } },
        ],
        projects: [{ projectId: `${orgId}-p`, project: { name: 'P' } }],
        orgMembers: [{ userId: `${orgId}-owner`, roles: ['ORG_OWNER'] }],
        projectMembers: [{ projectId: `${orgId}-p`, userId: `${orgId}-worker`, roles: ['PROJECT_OWNER'] }],
      },
    ]);
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body.errors).toBeUndefined();
    const ownerPat = (await api(server, 'POST', `/management/v1/users/${orgId}-owner/pats`, { token: server.pat, orgId, body: {} })).body.token as string;
    const minted = await api(server, 'POST', `/management/v1/users/${orgId}-worker/pats`, { token: ownerPat, orgId, body: {} });
    expect(minted.status, JSON.stringify(minted.body)).toBe(200);
  });

  it("keeps the management project the instance's: an owner of the default org (or a project member) only reads it", async () => {
    const management = server.app.ctx.instance.managementProjectId;
    const pat = async (userName: string) => {
      const user = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName, name: userName } });
      return { userId: user.body.userId as string, pat: (await api(server, 'POST', `/management/v1/users/${user.body.userId}/pats`, { token: server.pat, body: {} })).body.token as string };
    };
    const owner = await pat('default-org-owner');
    await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: owner.userId, roles: ['ORG_OWNER'] } });
    // A member of the project itself (the API has no project members: one stored before, as an import made them).
    const member = await pat('management-project-owner');
    await server.app.ctx.orgs.addMember(`project:${management}`, member.userId, ['PROJECT_OWNER']);
    // An app the instance owner put there: an instance role may change the management project.
    const web = { name: 'Operator tool', redirectUris: ['https://operator.example.com/cb'], authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC' };
    const consoleApp = await api(server, 'POST', `/management/v1/projects/${management}/apps/oidc`, { token: server.pat, body: web });
    expect(consoleApp.status, JSON.stringify(consoleApp.body)).toBe(200);
    const person = await pat('someone');

    for (const who of [owner, member]) {
      for (const [method, path, body] of [
        ['POST', `/management/v1/projects/${management}/apps/oidc`, { ...web, name: 'Phishing console', redirectUris: ['https://evil.example/cb'] }],
        ['POST', `/management/v1/projects/${management}/apps/api`, { name: 'Back door', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' }],
        ['POST', `/management/v1/projects/${management}/roles`, { roleKey: 'admin' }],
        ['PUT', `/management/v1/projects/${management}`, { name: 'ZITADEL', projectRoleCheck: true }],
        ['POST', `/management/v1/users/${person.userId}/grants`, { projectId: management }],
        ['POST', `/management/v1/projects/${management}/apps/${consoleApp.body.appId}/oidc_config/_generate_client_secret`, {}],
        ['PUT', `/management/v1/projects/${management}/apps/${consoleApp.body.appId}/oidc_config`, { ...web, redirectUris: ['https://evil.example/cb'] }],
        ['DELETE', `/management/v1/projects/${management}/apps/${consoleApp.body.appId}`, undefined],
      ] as const) {
        const res = await api(server, method, path, { token: who.pat, body });
        expect({ path, method, status: res.status, code: res.body.code }).toEqual({ path, method, status: 403, code: 7 });
        expect(res.body.message).toContain("the instance's management project is changed by instance administrators only");
      }
      // Reading it stays with its org and its members (its apps: the console's and the one above).
      expect((await api(server, 'GET', `/management/v1/projects/${management}`, { token: who.pat })).status).toBe(200);
      expect((await api(server, 'POST', `/management/v1/projects/${management}/apps/_search`, { token: who.pat, body: {} })).body.result).toHaveLength(2);
    }
    // The org owner still runs the org's other projects.
    const own = await api(server, 'POST', '/management/v1/projects', { token: owner.pat, body: { name: 'Own project' } });
    expect((await api(server, 'POST', `/management/v1/projects/${own.body.id}/apps/oidc`, { token: owner.pat, body: web })).status).toBe(200);
  });

  it('does not let a user manager mint credentials for an org owner (it could not grant that role)', async () => {
    const manager = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: 'user-manager', name: 'User manager' } });
    await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: manager.body.userId, roles: ['ORG_USER_MANAGER'] } });
    const managerPat = (await api(server, 'POST', `/management/v1/users/${manager.body.userId}/pats`, { token: server.pat, body: {} })).body.token as string;
    const owner = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: 'second-owner', name: 'Second owner' } });
    await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: owner.body.userId, roles: ['ORG_OWNER'] } });
    for (const [method, path] of [
      ['POST', `/management/v1/users/${owner.body.userId}/pats`],
      ['PUT', `/management/v1/users/${owner.body.userId}/secret`],
      ['POST', `/management/v1/users/${owner.body.userId}/keys`],
    ] as const) {
      const res = await api(server, method, path, { token: managerPat, body: { type: 'KEY_TYPE_JSON' } });
      expect({ path, status: res.status }).toEqual({ path, status: 403 });
    }
    // A machine user without roles is still the user manager's to manage.
    const plain = await api(server, 'POST', '/management/v1/users/machine', { token: managerPat, body: { userName: 'plain', name: 'Plain' } });
    expect((await api(server, 'POST', `/management/v1/users/${plain.body.userId}/pats`, { token: managerPat, body: {} })).status).toBe(200);
  });
});
