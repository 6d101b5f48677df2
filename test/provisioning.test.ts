import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type ApiResult } from './helpers/api.js';
import { HOSTILE_HASHES } from './helpers/hostile-hashes.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';
import { storedBytes } from './helpers/stored.js';

/**
 * The provisioning API (ZITADEL management/admin v1 subset) against a real server: response
 * shapes (camelCase, zero values omitted, secrets shown once), input leniency (snake_case, enum
 * numbers), and the error statuses 400/401/403/404/409.
 */
let server: InProcessServer;
let defaultOrgId: string;
let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

type Options = { body?: unknown; rawBody?: string; orgId?: string; token?: string };
const call = (method: string, path: string, options: Options = {}): Promise<ApiResult> => api(server, method, path, { token: server.pat, ...options });

const mgmt = (method: string, path: string, options: Options = {}) => call(method, `/management/v1${path}`, options);

function expectOk(result: ApiResult): any {
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  return result.body;
}

/** ZITADEL's error body and the status/code pair of one gRPC code. */
function expectError(result: ApiResult, status: number, code: number, messagePart?: string | RegExp): void {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.code).toBe(code);
  expect(typeof result.body.message).toBe('string');
  if (messagePart) expect(result.body.message).toMatch(messagePart);
}

const expectInvalid = (result: ApiResult, messagePart?: string | RegExp) => expectError(result, 400, 3, messagePart);

function expectDetails(details: any, resourceOwner: string | undefined, dateField: 'creationDate' | 'changeDate'): void {
  expect(details.sequence).toMatch(/^[1-9][0-9]*$/);
  expect(details[dateField]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  if (resourceOwner) expect(details.resourceOwner).toBe(resourceOwner);
}

const RFC3339_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const decodeKeyFile = (keyDetails: string) => JSON.parse(Buffer.from(keyDetails, 'base64').toString('utf8'));

async function addOrg(): Promise<string> {
  return expectOk(await mgmt('POST', '/orgs', { body: { name: unique('org') } })).id;
}

async function addProject(orgId?: string, body: Record<string, unknown> = {}): Promise<string> {
  return expectOk(await mgmt('POST', '/projects', { body: { name: unique('project'), ...body }, orgId })).id;
}

async function addMachine(orgId?: string, body: Record<string, unknown> = {}): Promise<string> {
  const name = unique('machine');
  return expectOk(await mgmt('POST', '/users/machine', { body: { userName: name, name, ...body }, orgId })).userId;
}

function humanBody(overrides: Record<string, unknown> = {}) {
  return {
    userName: unique('human'),
    profile: { firstName: 'Ada', lastName: 'Lovelace' },
    email: { email: 'ada@example.com' },
    ...overrides,
  };
}

async function addPat(userId: string): Promise<string> {
  return expectOk(await mgmt('POST', `/users/${userId}/pats`, { body: {} })).token;
}

beforeAll(async () => {
  server = await startInProcess();
  defaultOrgId = expectOk(await mgmt('GET', '/orgs/me')).org.id;
});

afterAll(async () => {
  await server?.close();
});

describe('authentication and authorization', () => {
  it('answers 401 without a token, with a garbage token and with a malformed header', async () => {
    expectError(await api(server, 'GET', '/management/v1/orgs/me'), 401, 16);
    expectError(await api(server, 'GET', '/management/v1/orgs/me', { token: 'garbage-token' }), 401, 16);
    expectError(await api(server, 'POST', '/management/v1/projects', { token: 'x'.repeat(43), body: { name: 'p' } }), 401, 16);
    expectError(await api(server, 'GET', '/management/v1/orgs/me', { headers: { authorization: 'Basic abc' } }), 401, 16);
    expectError(await api(server, 'POST', '/admin/v1/members/_search'), 401, 16);
  });

  it('answers 401 before looking at the body', async () => {
    expectError(await api(server, 'POST', '/management/v1/orgs', { rawBody: '{not json' }), 401, 16);
  });

  it('answers 403 to a machine user whose PAT works but who has no membership, until it gets one', async () => {
    const userId = await addMachine();
    const pat = await addPat(userId);
    const asMachine = (method: string, path: string, body?: unknown) => api(server, method, path, { token: pat, body });

    expectError(await asMachine('GET', '/management/v1/orgs/me'), 403, 7);
    expectError(await asMachine('POST', '/management/v1/projects', { name: 'nope' }), 403, 7);
    expectError(await asMachine('POST', '/management/v1/users/machine', { userName: 'x', name: 'x' }), 403, 7);
    expectError(await asMachine('GET', `/management/v1/users/${userId}`), 403, 7);
    expectError(await asMachine('POST', '/admin/v1/members/_search'), 403, 7);
    expectError(await asMachine('POST', '/management/v1/orgs', { name: unique('org') }), 403, 7);

    // A read-only org membership allows reads, not writes; nothing at instance level.
    expectOk(await mgmt('POST', '/orgs/me/members', { body: { userId, roles: ['ORG_OWNER_VIEWER'] } }));
    expect(expectOk(await asMachine('GET', '/management/v1/orgs/me')).org.id).toBe(defaultOrgId);
    expectOk(await asMachine('GET', `/management/v1/users/${userId}`));
    expectError(await asMachine('POST', '/management/v1/projects', { name: 'still nope' }), 403, 7);
    expectError(await asMachine('GET', `/admin/v1/orgs/${defaultOrgId}`), 403, 7);
  });

  it('answers 405 to a method a route does not serve', async () => {
    expectError(await mgmt('GET', '/orgs'), 405, 12);
    expectError(await mgmt('DELETE', '/users/machine'), 405, 12);
  });
});

describe('request bodies', () => {
  it('rejects bad JSON, non-objects, wrong types and missing fields with 400 naming the field', async () => {
    expectInvalid(await mgmt('POST', '/orgs', { rawBody: '{"name": ' }), /JSON/);
    expectInvalid(await mgmt('POST', '/orgs', { body: ['name'] }), /JSON object/);
    expectInvalid(await mgmt('POST', '/orgs', { rawBody: '"name"' }), /JSON object/);
    expectInvalid(await mgmt('POST', '/orgs', { rawBody: 'null' }), /JSON object/);
    const invalidUtf8 = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const res = await fetch(`${server.issuer}/management/v1/orgs`, { method: 'POST', headers: { authorization: `Bearer ${server.pat}` }, body: invalidUtf8 });
    expectInvalid({ status: res.status, body: await res.json(), headers: res.headers }, /UTF-8/);
    expectInvalid(await mgmt('POST', '/orgs', { body: { name: 42 } }), /name/);
    expectInvalid(await mgmt('POST', '/orgs', { body: {} }), /name is required/);
    expectInvalid(await mgmt('POST', '/orgs', { body: { name: '   ' } }), /name/);
    expectInvalid(await mgmt('POST', '/orgs', { body: { name: 'x'.repeat(201) } }), /name/);
    expectInvalid(await mgmt('POST', '/projects', { body: { name: 'p', projectRoleAssertion: 'yes' } }), /projectRoleAssertion/);
    expectInvalid(await mgmt('POST', '/projects', { body: { name: 'p', privateLabelingSetting: 'NOT_AN_ENUM' } }), /privateLabelingSetting/);
    expectInvalid(await mgmt('POST', '/projects', { body: { name: 'p', privateLabelingSetting: 17 } }), /privateLabelingSetting/);
  });

  it('answers 400, never 500, to hostile bodies', async () => {
    const deep = `{"name":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
    expectInvalid(await mgmt('POST', '/orgs', { rawBody: deep }));
    const nested = `{"name":"x","extra":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`;
    expectInvalid(await mgmt('POST', '/orgs', { rawBody: nested }), /nested/);
    const name = unique('proto');
    const added = expectOk(await mgmt('POST', '/orgs', { rawBody: `{"name":"${name}","__proto__":{"name":1}}` }));
    expect(expectOk(await call('GET', `/admin/v1/orgs/${added.id}`)).org.name).toBe(name);
    const userId = await addMachine();
    expectInvalid(await mgmt('POST', `/users/${userId}/pats`, { body: { expirationDate: '9999-12-31T23:59:59-05:00' } }), /expirationDate/);
  });

  it('treats an empty body as all fields unset', async () => {
    expectInvalid(await mgmt('POST', '/users/machine', { rawBody: '' }), /userName is required/);
    const userId = await addMachine();
    expectOk(await mgmt('PUT', `/users/${userId}/secret`, { rawBody: '' }));
  });

  it('ignores unknown fields and treats null as unset', async () => {
    const body = expectOk(await mgmt('POST', '/projects', { body: { name: unique('p'), unknownField: { deep: 1 }, hasProjectCheck: null } }));
    const project = expectOk(await mgmt('GET', `/projects/${body.id}`)).project;
    expect(project).not.toHaveProperty('hasProjectCheck');
    expect(project).not.toHaveProperty('unknownField');
  });

  it('accepts bodies above 64 KiB and rejects those above 1 MiB', async () => {
    const userId = await addMachine();
    const value = Buffer.alloc(300_000, 7).toString('base64');
    expectOk(await mgmt('POST', `/users/${userId}/metadata/big`, { body: { value } }));
    const got = expectOk(await mgmt('GET', `/users/${userId}/metadata/big`));
    expect(got.metadata.value).toBe(value);
    expectInvalid(await mgmt('POST', `/users/${userId}/metadata/huge`, { body: { value: 'A'.repeat(1_100_000) } }));
  });
});

describe('organizations', () => {
  it('adds an org, makes the creator its owner, and reads it through both APIs', async () => {
    const name = unique('Acme Org');
    const added = expectOk(await mgmt('POST', '/orgs', { body: { name } }));
    expect(added.id).toMatch(/^\d+$/);
    expectDetails(added.details, added.id, 'creationDate');

    const mine = expectOk(await mgmt('GET', '/orgs/me', { orgId: added.id })).org;
    expect(mine).toMatchObject({ id: added.id, name, state: 'ORG_STATE_ACTIVE' });
    expect(mine.primaryDomain).toMatch(/^acme-org-.*\.127\.0\.0\.1$|^acme-org-.*\.localhost$/);
    expectDetails(mine.details, added.id, 'creationDate');
    expect(mine.details.changeDate).toMatch(RFC3339_Z);

    const viaAdmin = expectOk(await call('GET', `/admin/v1/orgs/${added.id}`)).org;
    expect(viaAdmin).toEqual(mine);

    // The caller (the bootstrap admin) became the new org's owner.
    const members = expectOk(await mgmt('POST', '/orgs/me/members/_search', { orgId: added.id, body: {} }));
    expect(members.details.totalResult).toBe('1');
    expect(members.result).toHaveLength(1);
    expect(members.result[0]).toMatchObject({ roles: ['ORG_OWNER'], userType: 'TYPE_MACHINE' });
    expect(members.result[0].preferredLoginName).toMatch(/^admin@/);
  });

  it('answers 409 for a duplicate name and 404 for unknown orgs', async () => {
    const name = unique('dup-org');
    expectOk(await mgmt('POST', '/orgs', { body: { name } }));
    expectError(await mgmt('POST', '/orgs', { body: { name } }), 409, 6);
    expectError(await call('GET', '/admin/v1/orgs/123456789'), 404, 5);
    expectError(await mgmt('GET', '/orgs/me', { orgId: '123456789' }), 404, 5);
  });
});

describe('members', () => {
  it('adds org members (snake_case accepted) and lists them', async () => {
    const orgId = await addOrg();
    const userId = await addMachine(orgId);
    expectDetails(expectOk(await mgmt('POST', '/orgs/me/members', { orgId, body: { user_id: userId, roles: ['ORG_USER_MANAGER'] } })).details, orgId, 'creationDate');
    const result = expectOk(await mgmt('POST', '/orgs/me/members/_search', { orgId })).result as any[];
    const member = result.find((m) => m.userId === userId);
    expect(member).toMatchObject({ userId, roles: ['ORG_USER_MANAGER'], userType: 'TYPE_MACHINE' });
    expect(member.preferredLoginName).toContain('@');
    expectDetails(member.details, orgId, 'creationDate');

    expectError(await mgmt('POST', '/orgs/me/members', { orgId, body: { userId, roles: ['ORG_OWNER'] } }), 409, 6);
    expectInvalid(await mgmt('POST', '/orgs/me/members', { orgId, body: { userId, roles: ['IAM_OWNER'] } }), /unknown roles/);
    expectInvalid(await mgmt('POST', '/orgs/me/members', { orgId, body: { userId, roles: [] } }), /roles/);
    expectInvalid(await mgmt('POST', '/orgs/me/members', { orgId, body: { roles: ['ORG_OWNER'] } }), /userId is required/);
    expectError(await mgmt('POST', '/orgs/me/members', { orgId, body: { userId: '999', roles: ['ORG_OWNER'] } }), 404, 5);
  });

  it('adds instance members with instance roles only', async () => {
    const userId = await addMachine();
    expectOk(await call('POST', '/admin/v1/members', { body: { userId, roles: ['IAM_OWNER_VIEWER'] } }));
    const result = expectOk(await call('POST', '/admin/v1/members/_search', { body: {} })).result as any[];
    expect(result.find((m) => m.userId === userId)?.roles).toEqual(['IAM_OWNER_VIEWER']);
    expect(result.some((m) => m.roles.includes('IAM_OWNER'))).toBe(true);

    const other = await addMachine();
    expectInvalid(await call('POST', '/admin/v1/members', { body: { userId: other, roles: ['ORG_OWNER'] } }), /unknown roles/);
    expectError(await call('POST', '/admin/v1/members', { body: { userId, roles: ['IAM_OWNER'] } }), 409, 6);

    // The viewer can now read any org, but not write.
    const pat = await addPat(userId);
    expectOk(await api(server, 'GET', `/admin/v1/orgs/${defaultOrgId}`, { token: pat }));
    expectError(await api(server, 'POST', '/admin/v1/members', { token: pat, body: { userId: other, roles: ['IAM_OWNER'] } }), 403, 7);
  });

  it('changes an org member’s roles and removes the member; the member’s PAT loses the power at once (UpdateOrgMember, RemoveOrgMember)', async () => {
    // A member of another org's than its own: the membership, not the user's org, gives the power.
    const orgId = await addOrg();
    const userId = await addMachine();
    const pat = await addPat(userId);
    const asMember = (method: string, path: string, body?: unknown) => api(server, method, path, { token: pat, orgId, body });
    expectOk(await mgmt('POST', '/orgs/me/members', { orgId, body: { userId, roles: ['ORG_USER_MANAGER'] } }));
    expectOk(await asMember('POST', '/management/v1/users/machine', { userName: unique('made'), name: 'Made' }));

    expectDetails(expectOk(await mgmt('PUT', `/orgs/me/members/${userId}`, { orgId, body: { roles: ['ORG_OWNER_VIEWER'] } })).details, orgId, 'changeDate');
    const listed = expectOk(await mgmt('POST', '/orgs/me/members/_search', { orgId })).result as any[];
    expect(listed.find((m) => m.userId === userId)?.roles).toEqual(['ORG_OWNER_VIEWER']);
    expectError(await asMember('POST', '/management/v1/users/machine', { userName: unique('nope'), name: 'Nope' }), 403, 7);
    expectOk(await asMember('GET', '/management/v1/orgs/me'));
    // A viewer changes nobody's roles, its own neither.
    expectError(await asMember('PUT', `/management/v1/orgs/me/members/${userId}`, { roles: ['ORG_OWNER'] }), 403, 7);
    expectInvalid(await mgmt('PUT', `/orgs/me/members/${userId}`, { orgId, body: { roles: ['IAM_OWNER'] } }), /unknown roles/);
    expectInvalid(await mgmt('PUT', `/orgs/me/members/${userId}`, { orgId, body: { roles: [] } }), /roles/);

    expectOk(await mgmt('DELETE', `/orgs/me/members/${userId}`, { orgId }));
    expectError(await asMember('GET', '/management/v1/orgs/me'), 403, 7);
    expectError(await mgmt('DELETE', `/orgs/me/members/${userId}`, { orgId }), 404, 5);
    expectError(await mgmt('PUT', `/orgs/me/members/${userId}`, { orgId, body: { roles: ['ORG_OWNER'] } }), 404, 5);
    const events = expectOk(await call('POST', '/admin/v1/events/_search', { body: { eventTypes: ['org.member.changed', 'org.member.removed'], aggregateId: orgId } })).events as any[];
    expect(events.map((e) => e.type.type).sort()).toEqual(['org.member.changed', 'org.member.removed']);
  });

  it('keeps IAM_OWNER with its last holder, also when two removals race (RemoveIAMMember, UpdateIAMMember)', async () => {
    const own = await startInProcess();
    try {
      const as = (token: string) => (method: string, path: string, body?: unknown) => api(own, method, path, { token, body });
      const asAdmin = as(own.pat);
      const first = (expectOk(await asAdmin('POST', '/admin/v1/members/_search', {})).result as any[]).filter((m) => m.roles.includes('IAM_OWNER'));
      // The first start's two: the machine user admin and the person sesame-admin.
      expect(first).toHaveLength(2);
      // A third owner, a service user, acts from here on.
      const addOwner = async (userName: string) => {
        const made = expectOk(await asAdmin('POST', '/management/v1/users/machine', { userName, name: userName })).userId as string;
        expectOk(await asAdmin('POST', '/admin/v1/members', { userId: made, roles: ['IAM_OWNER'] }));
        return made;
      };
      const ownerId = await addOwner('owner-one');
      const asOwner = as(expectOk(await asAdmin('POST', `/management/v1/users/${ownerId}/pats`, {})).token as string);
      for (const m of first) expectOk(await asOwner('DELETE', `/admin/v1/members/${m.userId}`));
      expectError(await asOwner('DELETE', `/admin/v1/members/${ownerId}`), 400, 9, /last IAM_OWNER/);
      expectError(await asOwner('PUT', `/admin/v1/members/${ownerId}`, { roles: ['IAM_OWNER_VIEWER'] }), 400, 9, /last IAM_OWNER/);
      expectOk(await asOwner('PUT', `/admin/v1/members/${ownerId}`, { roles: ['IAM_OWNER', 'IAM_OWNER_VIEWER'] }));

      // The race the store decides: two owners, each removal alone would leave one; sent at once, one lands.
      const secondId = await (async () => {
        const made = expectOk(await asOwner('POST', '/management/v1/users/machine', { userName: 'owner-two', name: 'owner-two' })).userId as string;
        expectOk(await asOwner('POST', '/admin/v1/members', { userId: made, roles: ['IAM_OWNER'] }));
        return made;
      })();
      // A viewer counts the owners afterwards, whichever removal landed.
      const viewerId = expectOk(await asOwner('POST', '/management/v1/users/machine', { userName: 'owner-viewer', name: 'owner-viewer' })).userId as string;
      expectOk(await asOwner('POST', '/admin/v1/members', { userId: viewerId, roles: ['IAM_OWNER_VIEWER'] }));
      const asViewer = as(expectOk(await asOwner('POST', `/management/v1/users/${viewerId}/pats`, {})).token as string);
      const raced = await Promise.all([asOwner('DELETE', `/admin/v1/members/${ownerId}`), asOwner('DELETE', `/admin/v1/members/${secondId}`)]);
      // The other is refused: the last owner keeps the role (400), or, when the landed removal took the
      // acting owner's own role before the other was authorized, the caller holds it no more (403).
      const [landed, refused] = raced.map((r) => r.status).sort();
      expect(landed).toBe(200);
      expect([400, 403]).toContain(refused);
      const left = (expectOk(await asViewer('POST', '/admin/v1/members/_search', {})).result as any[]).filter((m) => m.roles.includes('IAM_OWNER'));
      expect(left.map((m) => m.userId)).toHaveLength(1);
      expect([ownerId, secondId]).toContain(left[0].userId);
    } finally {
      await own.close();
    }
  });
});

describe('an instance owner who can act', () => {
  it('stays: deactivating, locking or removing the last active IAM_OWNER is refused, also when two owners lock each other at once', async () => {
    const own = await startInProcess();
    try {
      const as = (token: string) => (method: string, path: string, body?: unknown) => api(own, method, path, { token, body });
      const asAdmin = as(own.pat);
      const first = (expectOk(await asAdmin('POST', '/admin/v1/members/_search', {})).result as any[]).filter((m) => m.roles.includes('IAM_OWNER'));
      const addOwner = async (actor: ReturnType<typeof as>, userName: string) => {
        const made = expectOk(await actor('POST', '/management/v1/users/machine', { userName, name: userName })).userId as string;
        expectOk(await actor('POST', '/admin/v1/members', { userId: made, roles: ['IAM_OWNER'] }));
        return { id: made, act: as(expectOk(await actor('POST', `/management/v1/users/${made}/pats`, {})).token as string) };
      };
      const one = await addOwner(asAdmin, 'owner-one');
      // The first start's owners keep their users but lose the role: owner-one is the last.
      for (const m of first) expectOk(await one.act('DELETE', `/admin/v1/members/${m.userId}`));
      for (const [method, path] of [
        ['POST', `/management/v1/users/${one.id}/_deactivate`],
        ['POST', `/management/v1/users/${one.id}/_lock`],
        ['DELETE', `/management/v1/users/${one.id}`],
      ] as const) {
        expectError(await one.act(method, path, method === 'POST' ? {} : undefined), 400, 9, /last IAM_OWNER who can act/);
      }
      // With a second owner, either may go; a deactivated owner does not count.
      const two = await addOwner(one.act, 'owner-two');
      expectOk(await one.act('POST', `/management/v1/users/${two.id}/_deactivate`, {}));
      expectError(await one.act('POST', `/management/v1/users/${one.id}/_lock`, {}), 400, 9, /last IAM_OWNER who can act/);
      expectError(await one.act('DELETE', `/admin/v1/members/${one.id}`), 400, 9, /last IAM_OWNER who can act/);
      expectOk(await one.act('POST', `/management/v1/users/${two.id}/_reactivate`, {}));

      // A viewer counts the owners who can act afterwards.
      const viewerId = expectOk(await one.act('POST', '/management/v1/users/machine', { userName: 'owner-viewer', name: 'owner-viewer' })).userId as string;
      expectOk(await one.act('POST', '/admin/v1/members', { userId: viewerId, roles: ['IAM_OWNER_VIEWER'] }));
      const asViewer = as(expectOk(await one.act('POST', `/management/v1/users/${viewerId}/pats`, {})).token as string);
      const activeOwners = async () => {
        const owners = (expectOk(await asViewer('POST', '/admin/v1/members/_search', {})).result as any[]).filter((m) => m.roles.includes('IAM_OWNER'));
        const states = await Promise.all(owners.map(async (m) => expectOk(await asViewer('GET', `/management/v1/users/${m.userId}`)).user.state as string));
        return owners.filter((_, i) => states[i] === 'USER_STATE_ACTIVE').map((m) => m.userId as string);
      };
      // The race the store decides: each locks the other; alone, either lock would leave one owner.
      const raced = await Promise.all([one.act('POST', `/management/v1/users/${two.id}/_lock`, {}), two.act('POST', `/management/v1/users/${one.id}/_lock`, {})]);
      // The other is refused by the rule (400), or its caller was locked before it was authenticated (401).
      const [landed, refused] = raced.map((r) => r.status).sort();
      expect(landed).toBe(200);
      expect([400, 401]).toContain(refused);
      const left = await activeOwners();
      expect(left).toHaveLength(1);
      expect([one.id, two.id]).toContain(left[0]);
      // The one left cannot remove itself either.
      const survivor = left[0] === one.id ? one : two;
      expectError(await survivor.act('DELETE', `/management/v1/users/${survivor.id}`), 400, 9, /last IAM_OWNER who can act/);
      // Removing a locked owner is allowed (the one left can act), and takes the user's memberships with it.
      const other = survivor === one ? two : one;
      expectOk(await survivor.act('DELETE', `/management/v1/users/${other.id}`));
      expectError(await survivor.act('GET', `/management/v1/users/${other.id}`), 404, 5);
      expect((expectOk(await asViewer('POST', '/admin/v1/members/_search', {})).result as any[]).some((m) => m.userId === other.id)).toBe(false);
    } finally {
      await own.close();
    }
  });
});

describe('projects and roles', () => {
  it('adds a project from snake_case with enum numbers and reads it back in camelCase', async () => {
    const added = expectOk(
      await mgmt('POST', '/projects', {
        body: { name: unique('proj'), project_role_assertion: true, has_project_check: true, private_labeling_setting: 0 },
      }),
    );
    // Whose branding the project's login shows (src/domain/branding-org.ts): stored and read back.
    const labelled = expectOk(await mgmt('POST', '/projects', { body: { name: unique('proj'), private_labeling_setting: 1 } }));
    expect(expectOk(await mgmt('GET', `/projects/${labelled.id}`)).project.privateLabelingSetting).toBe('PRIVATE_LABELING_SETTING_ENFORCE_PROJECT_RESOURCE_OWNER_POLICY');
    expectDetails(added.details, defaultOrgId, 'creationDate');
    const project = expectOk(await mgmt('GET', `/projects/${added.id}`)).project;
    expect(project).toMatchObject({
      id: added.id,
      state: 'PROJECT_STATE_ACTIVE',
      projectRoleAssertion: true,
      hasProjectCheck: true,
    });
    expect(project).not.toHaveProperty('privateLabelingSetting');
    expect(project).not.toHaveProperty('projectRoleCheck'); // false is omitted
    expect(project).not.toHaveProperty('project_role_assertion');
  });

  it('omits zero values of a default project', async () => {
    const id = await addProject();
    const project = expectOk(await mgmt('GET', `/projects/${id}`)).project;
    expect(Object.keys(project).sort()).toEqual(['details', 'id', 'name', 'state']);
  });

  it('hides a project of another org under an org context (404) and answers 404 for unknown ids', async () => {
    const orgId = await addOrg();
    const id = await addProject(orgId);
    expectError(await mgmt('GET', `/projects/${id}`), 404, 5);
    expect(expectOk(await mgmt('GET', `/projects/${id}`, { orgId })).project.id).toBe(id);
    expectError(await mgmt('GET', '/projects/404404404'), 404, 5);
    expectError(await mgmt('POST', `/projects/${id}/roles`, { body: { roleKey: 'x' } }), 404, 5);
  });

  it('adds roles one by one and in bulk, lists them, and refuses duplicates', async () => {
    const projectId = await addProject();
    expectDetails(expectOk(await mgmt('POST', `/projects/${projectId}/roles`, { body: { roleKey: 'admin', displayName: 'Administrator', group: 'staff' } })).details, defaultOrgId, 'changeDate');
    expectOk(await mgmt('POST', `/projects/${projectId}/roles/_bulk`, { body: { roles: [{ key: 'reader', display_name: 'Reader' }, { key: 'writer' }] } }));
    const listed = expectOk(await mgmt('POST', `/projects/${projectId}/roles/_search`, { body: {} }));
    expect(listed.details.totalResult).toBe('3');
    expect(listed.result.map((r: any) => ({ key: r.key, displayName: r.displayName, group: r.group }))).toEqual([
      { key: 'admin', displayName: 'Administrator', group: 'staff' },
      { key: 'reader', displayName: 'Reader', group: undefined },
      { key: 'writer', displayName: undefined, group: undefined },
    ]);
    expectError(await mgmt('POST', `/projects/${projectId}/roles`, { body: { roleKey: 'admin' } }), 409, 6);
    expectError(await mgmt('POST', `/projects/${projectId}/roles/_bulk`, { body: { roles: [{ key: 'new' }, { key: 'new' }] } }), 409, 6);
    expectInvalid(await mgmt('POST', `/projects/${projectId}/roles`, { body: { displayName: 'no key' } }), /roleKey is required/);
    expectInvalid(await mgmt('POST', `/projects/${projectId}/roles/_bulk`, { body: { roles: [] } }), /roles/);
    expectInvalid(await mgmt('POST', `/projects/${projectId}/roles/_bulk`, { body: { roles: 'admin' } }), /roles/);
  });

  it('removes a role, and the user grants naming it lose it in the same commit (RemoveProjectRole)', async () => {
    const projectId = await addProject();
    expectOk(await mgmt('POST', `/projects/${projectId}/roles/_bulk`, { body: { roles: [{ key: 'reader' }, { key: 'writer' }] } }));
    const userId = expectOk(await mgmt('POST', '/users/human/_import', { body: humanBody() })).userId;
    const grantId = expectOk(await mgmt('POST', `/users/${userId}/grants`, { body: { projectId, roleKeys: ['reader', 'writer'] } })).userGrantId;
    expectOk(await mgmt('DELETE', `/projects/${projectId}/roles/writer`));
    expect(expectOk(await mgmt('POST', `/projects/${projectId}/roles/_search`, { body: {} })).result.map((r: any) => r.key)).toEqual(['reader']);
    const grant = expectOk(await mgmt('GET', `/users/${userId}/grants/${grantId}`)).userGrant;
    expect(grant.roleKeys).toEqual(['reader']);
    expectError(await mgmt('DELETE', `/projects/${projectId}/roles/writer`), 404, 5, /not found/);
    const events = expectOk(await call('POST', '/admin/v1/events/_search', { body: { aggregateId: grantId } })).events ?? [];
    expect(events.map((e: any) => e.type.type)).toContain('user.grant.changed');
  });

  it('deactivates and reactivates a project, and removes it with its grants (and members) once its apps are gone; never the management project', async () => {
    const projectId = await addProject(undefined, { resourceUris: [] });
    expectOk(await mgmt('POST', `/projects/${projectId}/roles`, { body: { roleKey: 'reader' } }));
    const userId = expectOk(await mgmt('POST', '/users/human/_import', { body: humanBody() })).userId;
    expectOk(await mgmt('POST', `/users/${userId}/grants`, { body: { projectId, roleKeys: ['reader'] } }));
    const appId = expectOk(await mgmt('POST', `/projects/${projectId}/apps/api`, { body: { name: 'Backend', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' } })).appId;

    expectOk(await mgmt('POST', `/projects/${projectId}/_deactivate`, { body: {} }));
    expect(expectOk(await mgmt('GET', `/projects/${projectId}`)).project.state).toBe('PROJECT_STATE_INACTIVE');
    expectError(await mgmt('POST', `/projects/${projectId}/_deactivate`, { body: {} }), 400, 9, /already deactivated/);
    expectOk(await mgmt('POST', `/projects/${projectId}/_reactivate`, { body: {} }));
    expect(expectOk(await mgmt('GET', `/projects/${projectId}`)).project.state).toBe('PROJECT_STATE_ACTIVE');

    expectError(await mgmt('DELETE', `/projects/${projectId}`), 400, 9, /has 1 application: remove it first/);
    expectOk(await mgmt('DELETE', `/projects/${projectId}/apps/${appId}`));
    expectOk(await mgmt('DELETE', `/projects/${projectId}`));
    expectError(await mgmt('GET', `/projects/${projectId}`), 404, 5);
    expect(expectOk(await mgmt('POST', '/users/grants/_search', { body: { queries: [{ userIdQuery: { userId } }] } })).result ?? []).toEqual([]);
    // The removal's events name what went with it.
    const gone = (expectOk(await call('POST', '/admin/v1/events/_search', { body: { aggregateId: projectId } })).events ?? []).map((e: any) => e.type.type);
    expect(gone).toContain('project.removed');
    expectError(await mgmt('DELETE', `/projects/${projectId}`), 404, 5);
    // The name is free again, and so is the user's place for a grant: a new project takes both.
    const again = await addProject();
    expectOk(await mgmt('POST', `/projects/${again}/roles`, { body: { roleKey: 'reader' } }));
    expectOk(await mgmt('POST', `/users/${userId}/grants`, { body: { projectId: again, roleKeys: ['reader'] } }));

    const management = server.app.ctx.instance.managementProjectId;
    for (const [method, path] of [
      ['DELETE', `/projects/${management}`],
      ['POST', `/projects/${management}/_deactivate`],
    ] as const) {
      expectError(await mgmt(method, path, method === 'POST' ? { body: {} } : {}), 400, 9, /management project/);
    }
  });
});

describe('OIDC apps', () => {
  let projectId: string;
  beforeAll(async () => {
    projectId = await addProject();
  });
  const apps = () => `/projects/${projectId}/apps`;

  it('adds a web app with defaults, shows the secret once, and reads the config with zero values omitted', async () => {
    const res = await mgmt('POST', `${apps()}/oidc`, { body: { name: unique('web'), redirectUris: ['https://app.example.com/cb'] } });
    const added = expectOk(res);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(added.appId).toMatch(/^\d+$/);
    expect(added.clientId).toMatch(/^\d+$/);
    expect(added.clientSecret).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(added).not.toHaveProperty('noneCompliant');
    expectDetails(added.details, defaultOrgId, 'creationDate');

    const got = await mgmt('GET', `${apps()}/${added.appId}`);
    const app = expectOk(got).app;
    expect(JSON.stringify(got.body)).not.toContain(added.clientSecret);
    expect(app).toMatchObject({ id: added.appId, state: 'APP_STATE_ACTIVE' });
    expect(app.oidcConfig).toEqual({
      clientId: added.clientId,
      redirectUris: ['https://app.example.com/cb'],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
    });
    expect(app).not.toHaveProperty('apiConfig');
  });

  it('stores every field, from snake_case and enum numbers', async () => {
    const added = expectOk(
      await mgmt('POST', `${apps()}/oidc`, {
        body: {
          name: unique('full'),
          redirect_uris: ['https://full.example.com/cb', 'http://full.example.com/cb'],
          response_types: [0, 'OIDC_RESPONSE_TYPE_ID_TOKEN'],
          grant_types: [0, 1, 2],
          app_type: 0,
          auth_method_type: 1,
          post_logout_redirect_uris: ['https://full.example.com/bye'],
          version: 0,
          dev_mode: false,
          access_token_type: 1,
          access_token_role_assertion: true,
          id_token_role_assertion: true,
          id_token_userinfo_assertion: true,
          clock_skew: '0.5s',
          additional_origins: ['https://spa.example.com'],
          skip_native_app_success_page: true,
          // back-channel logout and login v2 are refused (test/trust.test.ts); login v1 is Sesame's own
          login_version: { login_v1: {} },
        },
      }),
    );
    expect(added.clientSecret).toMatch(/^[A-Za-z0-9]{64}$/); // POST is secret-based
    const config = expectOk(await mgmt('GET', `${apps()}/${added.appId}`)).app.oidcConfig;
    expect(config).toEqual({
      clientId: added.clientId,
      redirectUris: ['https://full.example.com/cb', 'http://full.example.com/cb'],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE', 'OIDC_RESPONSE_TYPE_ID_TOKEN'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_IMPLICIT', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_POST',
      postLogoutRedirectUris: ['https://full.example.com/bye'],
      accessTokenType: 'OIDC_TOKEN_TYPE_JWT',
      accessTokenRoleAssertion: true,
      idTokenRoleAssertion: true,
      idTokenUserinfoAssertion: true,
      clockSkew: '0.5s',
      additionalOrigins: ['https://spa.example.com'],
      skipNativeAppSuccessPage: true,
      loginVersion: { loginV1: {} },
      // http with implicit is allowed for code at runtime but reported by ZITADEL's compliance check
      noneCompliant: true,
      complianceProblems: [
        { key: 'Application.OIDC.V1.NotCompliant', localizedMessage: expect.any(String) },
        { key: 'Application.OIDC.V1.Implicit.RedirectUris.HttpNotAllowed', localizedMessage: expect.any(String) },
      ],
    });
  });

  it('adds a native public app with a loopback redirect and no secret', async () => {
    const added = expectOk(
      await mgmt('POST', `${apps()}/oidc`, {
        body: {
          name: unique('native'),
          redirectUris: ['http://127.0.0.1:5000/cb', 'com.example.app:/oauth'],
          appType: 'OIDC_APP_TYPE_NATIVE',
          authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
          grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
        },
      }),
    );
    expect(added).not.toHaveProperty('clientSecret');
    expect(added).not.toHaveProperty('noneCompliant');
    const config = expectOk(await mgmt('GET', `${apps()}/${added.appId}`)).app.oidcConfig;
    expect(config).toMatchObject({ appType: 'OIDC_APP_TYPE_NATIVE', authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE' });
    expectError(await mgmt('POST', `${apps()}/${added.appId}/oidc_config/_generate_client_secret`), 400, 9);
  });

  it('reports compliance problems of a user agent app with a secret', async () => {
    const added = expectOk(
      await mgmt('POST', `${apps()}/oidc`, {
        body: { name: unique('ua'), redirectUris: ['https://ua.example.com/cb'], appType: 1 },
      }),
    );
    expect(added.noneCompliant).toBe(true);
    expect(added.complianceProblems.map((p: any) => p.key)).toEqual(['Application.OIDC.V1.NotCompliant', 'Application.OIDC.V1.UserAgent.AuthMethodType.NotNone']);
  });

  it('validates redirect URIs, flows, clock skew and origins', async () => {
    const add = (body: Record<string, unknown>) => mgmt('POST', `${apps()}/oidc`, { body: { name: unique('bad'), ...body } });
    expectInvalid(await add({ redirectUris: ['/relative/cb'] }), /absolute URI/);
    expectInvalid(await add({ redirectUris: ['not a uri'] }), /absolute URI/);
    // http outside dev mode: not for public clients, not for the implicit flow, custom schemes only for native apps
    expectInvalid(await add({ redirectUris: ['http://spa.example.com/cb'], appType: 1, authMethodType: 2 }), /http/);
    expectInvalid(await add({ redirectUris: ['http://implicit.example.com/cb'], responseTypes: [1], grantTypes: [1] }), /http/);
    expectInvalid(await add({ redirectUris: ['myapp://cb'] }), /custom scheme/);
    expectInvalid(await add({ redirectUris: ['http://example.com/cb'], appType: 2, authMethodType: 2 }), /http/);
    // dev mode allows them (and glob patterns)
    expectOk(await add({ redirectUris: ['http://spa.example.com/cb', 'http://localhost:*/cb'], appType: 1, authMethodType: 2, devMode: true }));
    // response types need their grant types
    expectInvalid(await add({ redirectUris: ['https://x.example.com'], responseTypes: ['OIDC_RESPONSE_TYPE_ID_TOKEN'] }), /grantTypes/);
    expectInvalid(await add({ redirectUris: ['https://x.example.com'], grantTypes: ['OIDC_GRANT_TYPE_IMPLICIT'] }), /grantTypes/);
    expectInvalid(await add({ grantTypes: ['OIDC_GRANT_TYPE_WRONG'] }), /grantTypes/);
    expectInvalid(await add({ responseTypes: [7] }), /responseTypes/);
    expectInvalid(await add({ clockSkew: '6s' }), /clockSkew/);
    expectInvalid(await add({ clockSkew: 'soon' }), /clockSkew/);
    expectInvalid(await add({ clockSkew: 5 }), /clockSkew/);
    expectInvalid(await add({ additionalOrigins: ['https://spa.example.com/path'] }), /origin/);
    expectInvalid(await add({ redirectUris: 'https://x.example.com' }), /redirectUris/);
    expectInvalid(await mgmt('POST', `${apps()}/oidc`, { body: { redirectUris: ['https://x.example.com'] } }), /name is required/);
  });

  it('answers 409 for a duplicate app name and 404 for unknown apps or projects', async () => {
    const name = unique('dup-app');
    expectOk(await mgmt('POST', `${apps()}/oidc`, { body: { name, redirectUris: ['https://dup.example.com'] } }));
    expectError(await mgmt('POST', `${apps()}/oidc`, { body: { name, redirectUris: ['https://dup.example.com'] } }), 409, 6);
    expectError(await mgmt('GET', `${apps()}/123`), 404, 5);
    expectError(await mgmt('POST', '/projects/123/apps/oidc', { body: { name } }), 404, 5);
    expectError(await mgmt('PUT', `${apps()}/123/oidc_config`, { body: {} }), 404, 5);
  });

  it('updates the config, refuses an update without changes, and regenerates the secret', async () => {
    const added = expectOk(await mgmt('POST', `${apps()}/oidc`, { body: { name: unique('upd'), redirectUris: ['https://upd.example.com/cb'] } }));
    const update = { redirect_uris: ['https://upd.example.com/new'], grant_types: [0, 2], dev_mode: true, clock_skew: '2s' };
    const updated = expectOk(await mgmt('PUT', `${apps()}/${added.appId}/oidc_config`, { body: update }));
    expectDetails(updated.details, defaultOrgId, 'changeDate');
    const config = expectOk(await mgmt('GET', `${apps()}/${added.appId}`)).app.oidcConfig;
    expect(config).toMatchObject({
      redirectUris: ['https://upd.example.com/new'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
      devMode: true,
      clockSkew: '2s',
    });
    expectError(await mgmt('PUT', `${apps()}/${added.appId}/oidc_config`, { body: update }), 400, 9, /no changes/);
    expectInvalid(await mgmt('PUT', `${apps()}/${added.appId}/oidc_config`, { body: { redirectUris: ['relative'] } }), /absolute/);

    const regenerated = await mgmt('POST', `${apps()}/${added.appId}/oidc_config/_generate_client_secret`, { body: {} });
    const secret = expectOk(regenerated);
    expect(regenerated.headers.get('cache-control')).toBe('no-store');
    expect(secret.clientSecret).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(secret.clientSecret).not.toBe(added.clientSecret);
    expectDetails(secret.details, defaultOrgId, 'changeDate');
    // the API secret route refuses an OIDC app
    expectError(await mgmt('POST', `${apps()}/${added.appId}/api_config/_generate_client_secret`), 400, 9);
  });
});

describe('API apps and app keys', () => {
  let projectId: string;
  beforeAll(async () => {
    projectId = await addProject();
  });
  const apps = () => `/projects/${projectId}/apps`;

  it('adds a Basic API app with a secret shown once and omits the zero auth method on read', async () => {
    const added = expectOk(await mgmt('POST', `${apps()}/api`, { body: { name: unique('api'), authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' } }));
    expect(added.clientSecret).toMatch(/^[A-Za-z0-9]{64}$/);
    const got = await mgmt('GET', `${apps()}/${added.appId}`);
    expect(expectOk(got).app.apiConfig).toEqual({ clientId: added.clientId });
    expect(got.body.app).not.toHaveProperty('oidcConfig');
    expect(JSON.stringify(got.body)).not.toContain(added.clientSecret);

    const secret = expectOk(await mgmt('POST', `${apps()}/${added.appId}/api_config/_generate_client_secret`));
    expect(secret.clientSecret).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(secret.clientSecret).not.toBe(added.clientSecret);
    expectError(await mgmt('POST', `${apps()}/${added.appId}/oidc_config/_generate_client_secret`), 400, 9);
    // keys need private_key_jwt
    expectError(await mgmt('POST', `${apps()}/${added.appId}/keys`, { body: { type: 'KEY_TYPE_JSON' } }), 400, 9);
  });

  it('adds a private_key_jwt API app and generates a key file for it', async () => {
    const added = expectOk(await mgmt('POST', `${apps()}/api`, { body: { name: unique('jwt-api'), auth_method_type: 1 } }));
    expect(added).not.toHaveProperty('clientSecret');
    expect(expectOk(await mgmt('GET', `${apps()}/${added.appId}`)).app.apiConfig).toEqual({
      clientId: added.clientId,
      authMethodType: 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT',
    });
    expectError(await mgmt('POST', `${apps()}/${added.appId}/api_config/_generate_client_secret`), 400, 9);

    const key = expectOk(await mgmt('POST', `${apps()}/${added.appId}/keys`, { body: { type: 1 } }));
    expectDetails(key.details, defaultOrgId, 'creationDate');
    const file = decodeKeyFile(key.keyDetails);
    expect(file).toEqual({ type: 'application', keyId: key.id, key: expect.stringContaining('-----BEGIN RSA PRIVATE KEY-----'), appId: added.appId, clientId: added.clientId });
    expect(createPrivateKey(file.key).asymmetricKeyDetails?.modulusLength).toBe(2048);

    const got = await mgmt('GET', `${apps()}/${added.appId}/keys/${key.id}`);
    expect(expectOk(got).key).toEqual({ id: key.id, details: expect.any(Object), type: 'KEY_TYPE_JSON', expirationDate: '9999-12-31T23:59:59Z' });
    expect(JSON.stringify(got.body)).not.toContain('PRIVATE KEY');
    expectError(await mgmt('GET', `${apps()}/${added.appId}/keys/123`), 404, 5);
  });

  it('registers a supplied public key without generating one, and validates key requests', async () => {
    const added = expectOk(await mgmt('POST', `${apps()}/oidc`, { body: { name: unique('pkjwt'), redirectUris: ['https://k.example.com'], authMethodType: 3 } }));
    expect(added).not.toHaveProperty('clientSecret');
    const keys = `${apps()}/${added.appId}/keys`;
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const expiration = '2099-01-02T03:04:05Z';
    const key = expectOk(await mgmt('POST', keys, { body: { type: 'KEY_TYPE_JSON', public_key: Buffer.from(pem).toString('base64'), expiration_date: expiration } }));
    expect(key).not.toHaveProperty('keyDetails');
    expect(expectOk(await mgmt('GET', `${keys}/${key.id}`)).key.expirationDate).toBe(expiration);

    expectInvalid(await mgmt('POST', keys, { body: {} }), /type/);
    expectInvalid(await mgmt('POST', keys, { body: { type: 'KEY_TYPE_UNSPECIFIED' } }), /type/);
    expectInvalid(await mgmt('POST', keys, { body: { type: 1, expirationDate: '2001-01-01T00:00:00Z' } }), /expirationDate/);
    expectInvalid(await mgmt('POST', keys, { body: { type: 1, expirationDate: 'tomorrow' } }), /expirationDate/);
    expectInvalid(await mgmt('POST', keys, { body: { type: 1, publicKey: Buffer.from('not a key').toString('base64') } }), /publicKey/);
  });
});

describe('human users', () => {
  it('adds a human with a password and reads it back', async () => {
    const body = humanBody({
      profile: { first_name: 'Grace', last_name: 'Hopper', nick_name: 'amazing', preferred_language: 'en', gender: 1 },
      email: { email: 'grace@example.com', is_email_verified: true },
      phone: { phone: '+41 79 123 45 67' },
      initialPassword: 'Correct-Horse-9',
    });
    const added = expectOk(await mgmt('POST', '/users/human', { body }));
    expectDetails(added.details, defaultOrgId, 'creationDate');

    const user = expectOk(await mgmt('GET', `/users/${added.userId}`)).user;
    expect(user).toMatchObject({ id: added.userId, state: 'USER_STATE_ACTIVE', userName: body.userName });
    expect(user.preferredLoginName).toBe(`${body.userName}@${user.loginNames[0].split('@')[1]}`);
    expect(user.loginNames).toContain(user.preferredLoginName);
    expect(user.human).toEqual({
      profile: { firstName: 'Grace', lastName: 'Hopper', nickName: 'amazing', displayName: 'Grace Hopper', preferredLanguage: 'en', gender: 'GENDER_FEMALE' },
      email: { email: 'grace@example.com', isEmailVerified: true },
      phone: { phone: '+41 79 123 45 67' },
    });
    expect(user).not.toHaveProperty('machine');
    expect(JSON.stringify(user)).not.toMatch(/password|Correct-Horse/i);
  });

  it('starts a human without a password in the initial state', async () => {
    const added = expectOk(await mgmt('POST', '/users/human', { body: humanBody() }));
    const user = expectOk(await mgmt('GET', `/users/${added.userId}`)).user;
    expect(user.state).toBe('USER_STATE_INITIAL');
    expect(user.human.profile).toEqual({ firstName: 'Ada', lastName: 'Lovelace', displayName: 'Ada Lovelace' });
    expect(user.human.email).toEqual({ email: 'ada@example.com' });
  });

  it('validates human users and refuses duplicate user names', async () => {
    const add = (overrides: Record<string, unknown>) => mgmt('POST', '/users/human', { body: humanBody(overrides) });
    expectInvalid(await add({ email: { email: 'not-an-email' } }), /email/);
    expectInvalid(await add({ email: {} }), /email.email is required/);
    expectInvalid(await add({ email: undefined }), /email is required/);
    expectInvalid(await add({ phone: { phone: '0791234567' } }), /phone/);
    expectInvalid(await add({ profile: { firstName: 'NoLast' } }), /profile.lastName is required/);
    expectInvalid(await add({ profile: undefined }), /profile is required/);
    expectInvalid(await add({ userName: '' }), /userName/);
    expectInvalid(await add({ userName: 'u'.repeat(201) }), /userName/);
    expectInvalid(await add({ profile: { firstName: 'A', lastName: 'B', gender: 'GENDER_OTHER' } }), /gender/);
    expectInvalid(await add({ initialPassword: 12345678 }), /initialPassword/);

    const userName = unique('taken');
    expectOk(await add({ userName }));
    expectError(await add({ userName }), 409, 6);
    expectError(await add({ userName: userName.toUpperCase() }), 409, 6);
  });

  it('imports humans with a plaintext password, a supported hash, or a given id', async () => {
    const userId = `imported-${Date.now()}`;
    const bcrypt = `$2a$14$${'abcdefghijklmnopqrstuv'.padEnd(53, 'A')}`;
    const imported = expectOk(
      await mgmt('POST', '/users/human/_import', {
        body: {
          user_id: userId,
          ...humanBody(),
          hashed_password: { value: bcrypt },
          password_change_required: true,
          otp_code: 'JBSWY3DPEHPK3PXP',
        },
      }),
    );
    expect(imported.userId).toBe(userId);
    expectDetails(imported.details, defaultOrgId, 'creationDate');
    expect(expectOk(await mgmt('GET', `/users/${userId}`)).user.state).toBe('USER_STATE_ACTIVE');
    expectError(await mgmt('POST', '/users/human/_import', { body: { userId, ...humanBody() } }), 409, 6);

    for (const value of [
      '$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo',
      '$pbkdf2-sha256$27500$c2FsdA==$aGFzaA==',
      `$6$rounds=5000$saltsalt$${'a'.repeat(86)}`,
      '$scrypt$ln=16,r=8,p=1$c2FsdA$aGFzaA',
    ]) {
      expectOk(await mgmt('POST', '/users/human/_import', { body: { ...humanBody(), hashedPassword: { value } } }));
    }
    const withPassword = expectOk(await mgmt('POST', '/users/human/_import', { body: { ...humanBody(), password: 'Plain-Import-1' } }));
    expect(expectOk(await mgmt('GET', `/users/${withPassword.userId}`)).user.state).toBe('USER_STATE_ACTIVE');
  });

  it('rejects unsupported hash formats and out-of-bounds costs', async () => {
    const importHash = (value: string) => mgmt('POST', '/users/human/_import', { body: { ...humanBody(), hashedPassword: { value } } });
    expectInvalid(await importHash('5f4dcc3b5aa765d61d8327deb882cf99'), /Errors\.Hash\.NotSupported/);
    expectInvalid(await importHash('$unknown$abc'), /Errors\.Hash\.NotSupported/);
    expectInvalid(await importHash(`$2a$04$${'a'.repeat(53)}`), /Errors\.User\.Password\.Invalid/);
    expectInvalid(await importHash('$pbkdf2-sha256$10$c2FsdA==$aGFzaA=='), /Errors\.User\.Password\.Invalid/);
    expectInvalid(await mgmt('POST', '/users/human/_import', { body: { ...humanBody(), hashedPassword: 'plain' } }), /hashedPassword/);
  });

  it('rejects hashes that would take too long to verify, saying why', async () => {
    for (const [encoded, reason] of Object.values(HOSTILE_HASHES)) {
      const res = await mgmt('POST', '/users/human/_import', { body: { ...humanBody(), hashedPassword: { value: encoded } } });
      expectInvalid(res, reason);
      expectInvalid(res, /Errors\.User\.Password\.Invalid/);
    }
    // ZITADEL's default hasher (bcrypt cost 14) stays importable.
    expectOk(await mgmt('POST', '/users/human/_import', { body: { ...humanBody(), hashedPassword: { value: `$2a$14$${'a'.repeat(53)}` } } }));
  });
});

describe('machine users and their credentials', () => {
  it('adds a machine user (given id, JWT tokens) and reads it back', async () => {
    const userId = `machine-${Date.now()}`;
    const userName = unique('svc');
    const added = expectOk(await mgmt('POST', '/users/machine', { body: { user_id: userId, user_name: userName, name: 'Service', description: 'does things', access_token_type: 1 } }));
    expect(added.userId).toBe(userId);
    const user = expectOk(await mgmt('GET', `/users/${userId}`)).user;
    expect(user).toMatchObject({ id: userId, userName, state: 'USER_STATE_ACTIVE' });
    expect(user.machine).toEqual({ name: 'Service', description: 'does things', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' });
    expect(user).not.toHaveProperty('human');

    const bearer = await addMachine(undefined, { accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' });
    expect(expectOk(await mgmt('GET', `/users/${bearer}`)).user.machine).not.toHaveProperty('accessTokenType');

    expectError(await mgmt('POST', '/users/machine', { body: { userName, name: 'again' } }), 409, 6);
    expectError(await mgmt('POST', '/users/machine', { body: { userId, userName: unique('svc'), name: 'again' } }), 409, 6);
    expectInvalid(await mgmt('POST', '/users/machine', { body: { userName: unique('svc'), name: 'x', description: 'd'.repeat(501) } }), /description/);
    expectInvalid(await mgmt('POST', '/users/machine', { body: { userName: unique('svc') } }), /name is required/);
    expectInvalid(await mgmt('POST', '/users/machine', { body: { userName: unique('svc'), name: 'x', accessTokenType: 'JWT' } }), /accessTokenType/);
  });

  it('generates a machine secret shown once, with the preferred login name as client id', async () => {
    const userId = await addMachine();
    const user = expectOk(await mgmt('GET', `/users/${userId}`)).user;
    expect(user.machine).not.toHaveProperty('hasSecret');
    const res = await mgmt('PUT', `/users/${userId}/secret`, { body: {} });
    const secret = expectOk(res);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(secret.clientId).toBe(user.preferredLoginName);
    expect(secret.clientSecret).toMatch(/^[A-Za-z0-9]{64}$/);
    expectDetails(secret.details, defaultOrgId, 'changeDate');
    const after = await mgmt('GET', `/users/${userId}`);
    expect(expectOk(after).user.machine.hasSecret).toBe(true);
    expect(JSON.stringify(after.body)).not.toContain(secret.clientSecret);

    const human = expectOk(await mgmt('POST', '/users/human', { body: humanBody() })).userId;
    expectError(await mgmt('PUT', `/users/${human}/secret`), 400, 9);
    expectError(await mgmt('PUT', '/users/404404/secret'), 404, 5);
  });

  it('adds machine keys: a generated key file, or a registered public key', async () => {
    const userId = await addMachine();
    const key = expectOk(await mgmt('POST', `/users/${userId}/keys`, { body: { type: 'KEY_TYPE_JSON' } }));
    expectDetails(key.details, defaultOrgId, 'creationDate');
    const file = decodeKeyFile(key.keyDetails);
    expect(file).toEqual({
      type: 'serviceaccount',
      keyId: key.keyId,
      key: expect.stringMatching(/^-----BEGIN RSA PRIVATE KEY-----/),
      expirationDate: '9999-12-31T23:59:59Z',
      userId,
    });
    expect(createPrivateKey(file.key).asymmetricKeyDetails?.modulusLength).toBe(2048);

    const got = await mgmt('GET', `/users/${userId}/keys/${key.keyId}`);
    expect(expectOk(got).key).toMatchObject({ id: key.keyId, type: 'KEY_TYPE_JSON', expirationDate: '9999-12-31T23:59:59Z' });
    expect(JSON.stringify(got.body)).not.toContain('PRIVATE KEY');

    const expiration = '2090-06-01T12:00:00Z';
    const dated = expectOk(await mgmt('POST', `/users/${userId}/keys`, { body: { type: 1, expirationDate: expiration } }));
    expect(decodeKeyFile(dated.keyDetails).expirationDate).toBe(expiration);

    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = publicKey.export({ format: 'pem', type: 'pkcs1' }).toString(); // "RSA PUBLIC KEY"
    const supplied = expectOk(await mgmt('POST', `/users/${userId}/keys`, { body: { type: 1, publicKey: Buffer.from(pem).toString('base64') } }));
    expect(supplied.keyId).toMatch(/^\d+$/);
    expect(supplied).not.toHaveProperty('keyDetails');

    expectInvalid(await mgmt('POST', `/users/${userId}/keys`, { body: { type: 0 } }), /type/);
    expectInvalid(await mgmt('POST', `/users/${userId}/keys`, { body: { type: 1, expirationDate: '2000-01-01T00:00:00Z' } }), /expirationDate/);
    expectError(await mgmt('GET', `/users/${userId}/keys/123`), 404, 5);
    const human = expectOk(await mgmt('POST', '/users/human', { body: humanBody() })).userId;
    expectError(await mgmt('POST', `/users/${human}/keys`, { body: { type: 1 } }), 400, 9);
  });

  it('adds personal access tokens that authenticate, and reads them without the token', async () => {
    const userId = await addMachine();
    const pat = expectOk(await mgmt('POST', `/users/${userId}/pats`, { body: { expiration_date: '2091-02-03T04:05:06.5Z' } }));
    expect(pat.tokenId).toMatch(/^\d+$/);
    expect(pat.token.length).toBeGreaterThanOrEqual(40);
    expectDetails(pat.details, defaultOrgId, 'creationDate');
    const got = await mgmt('GET', `/users/${userId}/pats/${pat.tokenId}`);
    expect(expectOk(got).token).toMatchObject({ id: pat.tokenId, expirationDate: '2091-02-03T04:05:06.500Z' });
    expect(JSON.stringify(got.body)).not.toContain(pat.token);

    // The PAT identifies the caller: no membership → 403 (not 401).
    expectError(await api(server, 'GET', '/management/v1/orgs/me', { token: pat.token }), 403, 7);

    const forever = expectOk(await mgmt('POST', `/users/${userId}/pats`));
    expect(expectOk(await mgmt('GET', `/users/${userId}/pats/${forever.tokenId}`)).token.expirationDate).toBe('9999-12-31T23:59:59Z');
    expectInvalid(await mgmt('POST', `/users/${userId}/pats`, { body: { expirationDate: '2020-01-01T00:00:00Z' } }), /expirationDate/);
    expectError(await mgmt('GET', `/users/${userId}/pats/1`), 404, 5);
    const human = expectOk(await mgmt('POST', '/users/human', { body: humanBody() })).userId;
    expectError(await mgmt('POST', `/users/${human}/pats`, { body: {} }), 400, 9);
  });
});

describe('user grants and metadata', () => {
  it('grants project roles to a user and reads the grant', async () => {
    const projectId = await addProject();
    expectOk(await mgmt('POST', `/projects/${projectId}/roles/_bulk`, { body: { roles: [{ key: 'viewer' }, { key: 'editor' }] } }));
    const userId = await addMachine();
    const granted = expectOk(await mgmt('POST', `/users/${userId}/grants`, { body: { project_id: projectId, role_keys: ['viewer', 'editor'] } }));
    expectDetails(granted.details, defaultOrgId, 'creationDate');
    const grant = expectOk(await mgmt('GET', `/users/${userId}/grants/${granted.userGrantId}`)).userGrant;
    expect(grant).toMatchObject({
      id: granted.userGrantId,
      roleKeys: ['viewer', 'editor'],
      state: 'USER_GRANT_STATE_ACTIVE',
      userId,
      projectId,
      orgId: defaultOrgId,
      userType: 'TYPE_MACHINE',
    });
    expect(grant).not.toHaveProperty('projectGrantId');

    expectError(await mgmt('POST', `/users/${userId}/grants`, { body: { projectId, roleKeys: ['viewer'] } }), 409, 6);
    const other = await addMachine();
    expectError(await mgmt('POST', `/users/${other}/grants`, { body: { projectId, roleKeys: ['nope'] } }), 400, 9, /unknown role/);
    expectError(await mgmt('POST', `/users/${other}/grants`, { body: { projectId: '404', roleKeys: [] } }), 404, 5);
    expectError(await mgmt('POST', '/users/404/grants', { body: { projectId, roleKeys: [] } }), 404, 5);
    expectInvalid(await mgmt('POST', `/users/${other}/grants`, { body: { roleKeys: ['viewer'] } }), /projectId is required/);
    expectError(await mgmt('GET', `/users/${userId}/grants/404`), 404, 5);
  });

  it('sets and reads metadata as base64 bytes', async () => {
    const userId = await addMachine();
    const value = Buffer.from('hello metadata').toString('base64');
    expectDetails(expectOk(await mgmt('POST', `/users/${userId}/metadata/greeting`, { body: { value } })).details, defaultOrgId, 'changeDate');
    expect(expectOk(await mgmt('GET', `/users/${userId}/metadata/greeting`)).metadata).toMatchObject({ key: 'greeting', value });
    expectError(await mgmt('GET', `/users/${userId}/metadata/constructor`), 404, 5);
    expectInvalid(await mgmt('POST', `/users/${userId}/metadata/bad`, { body: { value: 'not base64!' } }), /value/);
    expectInvalid(await mgmt('POST', `/users/${userId}/metadata/empty`, { body: { value: '' } }), /value/);
  });

  it('lists metadata by key and removes one entry (ListUserMetadata, RemoveUserMetadata)', async () => {
    const userId = await addMachine();
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    for (const [key, value] of [
      ['team', 'billing'],
      ['cost-centre', '42'],
      ['team-lead', 'ada'],
    ] as const)
      expectOk(await mgmt('POST', `/users/${userId}/metadata/${key}`, { body: { value: b64(value) } }));
    const list = (body: unknown) => mgmt('POST', `/users/${userId}/metadata/_search`, { body });
    const keys = (result: ApiResult) => (expectOk(result).result ?? []).map((m: { key: string }) => m.key);
    const all = expectOk(await list({ query: { asc: true } }));
    expect(all.details.totalResult).toBe('3');
    expect(all.result.map((m: { key: string; value: string }) => [m.key, m.value])).toEqual([
      ['cost-centre', b64('42')],
      ['team', b64('billing')],
      ['team-lead', b64('ada')],
    ]);
    expect(keys(await list({ query: { asc: true }, queries: [{ keyQuery: { key: 'team', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }] }))).toEqual(['team', 'team-lead']);
    expect(keys(await list({ query: { asc: true, limit: 1, offset: 1 } }))).toEqual(['team']);
    expectInvalid(await list({ queries: [{ valueQuery: { value: 'x' } }] }), /queries/);

    expectDetails(expectOk(await mgmt('DELETE', `/users/${userId}/metadata/team`)).details, defaultOrgId, 'changeDate');
    expect(keys(await list({ query: { asc: true } }))).toEqual(['cost-centre', 'team-lead']);
    expectError(await mgmt('GET', `/users/${userId}/metadata/team`), 404, 5);
    // Gone once: a second removal (or one of a key never set, or of the prototype's names) is NotFound.
    expectError(await mgmt('DELETE', `/users/${userId}/metadata/team`), 404, 5);
    expectError(await mgmt('DELETE', `/users/${userId}/metadata/constructor`), 404, 5);
    const events = await call('POST', '/admin/v1/events/_search', { body: { aggregateId: userId, eventTypes: ['user.metadata.removed'] } });
    expect(expectOk(events).events.map((e: { type: { type: string } }) => e.type.type)).toEqual(['user.metadata.removed']);
  });
});

describe('org context', () => {
  it('hides users, apps, keys and grants of another org (404) and finds them with its x-zitadel-orgid', async () => {
    const orgId = await addOrg();
    const userId = await addMachine(orgId);
    const projectId = await addProject(orgId);
    const app = expectOk(await mgmt('POST', `/projects/${projectId}/apps/api`, { orgId, body: { name: unique('api'), authMethodType: 1 } }));
    const key = expectOk(await mgmt('POST', `/users/${userId}/keys`, { orgId, body: { type: 1 } }));
    const pat = expectOk(await mgmt('POST', `/users/${userId}/pats`, { orgId, body: {} }));

    expectError(await mgmt('GET', `/users/${userId}`), 404, 5);
    expectError(await mgmt('PUT', `/users/${userId}/secret`), 404, 5);
    expectError(await mgmt('GET', `/users/${userId}/keys/${key.keyId}`), 404, 5);
    expectError(await mgmt('GET', `/users/${userId}/pats/${pat.tokenId}`), 404, 5);
    expectError(await mgmt('GET', `/projects/${projectId}/apps/${app.appId}`), 404, 5);
    expectError(await mgmt('POST', `/users/${userId}/grants`, { body: { projectId, roleKeys: [] } }), 404, 5);

    const user = expectOk(await mgmt('GET', `/users/${userId}`, { orgId })).user;
    expect(user.details.resourceOwner).toBe(orgId);
    expectOk(await mgmt('GET', `/projects/${projectId}/apps/${app.appId}`, { orgId }));
    expectOk(await mgmt('GET', `/users/${userId}/keys/${key.keyId}`, { orgId }));
    // A user of the default org cannot be granted a project of the other org.
    const local = await addMachine();
    expectError(await mgmt('POST', `/users/${local}/grants`, { orgId, body: { projectId, roleKeys: [] } }), 404, 5);
  });

  it('lets an org owner manage its own org only', async () => {
    const orgId = await addOrg();
    const ownerId = await addMachine(orgId);
    expectOk(await mgmt('POST', '/orgs/me/members', { orgId, body: { userId: ownerId, roles: ['ORG_OWNER'] } }));
    const pat = expectOk(await mgmt('POST', `/users/${ownerId}/pats`, { orgId, body: {} })).token;
    const asOwner = (method: string, path: string, options: Options = {}) => mgmt(method, path, { ...options, token: pat });

    // Without a header the owner's own org is the context.
    expect(expectOk(await asOwner('GET', '/orgs/me')).org.id).toBe(orgId);
    const projectId = expectOk(await asOwner('POST', '/projects', { body: { name: unique('owned') } })).id;
    expect(expectOk(await asOwner('GET', `/projects/${projectId}`)).project.details.resourceOwner).toBe(orgId);
    expectError(await asOwner('GET', '/orgs/me', { orgId: defaultOrgId }), 403, 7);
    expectError(await asOwner('POST', '/projects', { orgId: defaultOrgId, body: { name: unique('foreign') } }), 403, 7);
    expectError(await call('POST', '/admin/v1/members', { token: pat, body: { userId: ownerId, roles: ['IAM_OWNER'] } }), 403, 7);
  });
});

describe('password storage', () => {
  it('never writes a plaintext password to the database', async () => {
    // Its own server: the database file is read once that server has shut down cleanly.
    const own = await startInProcess();
    try {
      const password = `Plaintext-${Date.now()}-Needle!`;
      const imported = `Imported-${Date.now()}-Needle!`;
      const userName = unique('stored-user');
      const call = (path: string, body: unknown) => api(own, 'POST', `/management/v1${path}`, { token: own.pat, body });
      expectOk(await call('/users/human', humanBody({ userName, initialPassword: password })));
      expectOk(await call('/users/human/_import', humanBody({ password: imported })));
      await own.stop();

      const db = await storedBytes(own.dataDir);
      // The search works: the user name was written...
      expect(db.includes(Buffer.from(userName))).toBe(true);
      // ...and so was an argon2id hash, but never the passwords.
      expect(db.includes(Buffer.from('$argon2id$'))).toBe(true);
      expect(db.includes(Buffer.from(password))).toBe(false);
      expect(db.includes(Buffer.from(imported))).toBe(false);
    } finally {
      await own.close();
    }
  });
});
