import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpAt } from '../src/crypto/totp.js';
import { api, type ApiResult } from './helpers/api.js';
import { Agent, signIn } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';

/**
 * Moving organizations between two Sesame instances: A is filled through the provisioning API,
 * exported with passwords and OTP secrets, and imported into a fresh B (its own data dir and
 * port). On B the same ids, client ids and secrets work: a person signs in with the old password
 * and a TOTP code, an app's code flow runs with its old client id and secret, a machine user gets
 * a token with its old secret; and B exports the same bundle A did.
 */
const clock = new TestClock();
let a: InProcessServer;
let b: InProcessServer;
const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const PASSWORD = 'Old-Password-42';
const REDIRECT = 'http://localhost:9999/callback';

const ok = (result: ApiResult): any => {
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  return result.body;
};
const on = (server: InProcessServer) => (method: string, path: string, body?: unknown, orgId?: string) =>
  api(server, method, path, { token: server.pat, ...(body === undefined ? {} : { body }), ...(orgId ? { orgId } : {}) });

interface Source {
  orgIds: string[];
  adminA: string;
  person: { userId: string; loginName: string };
  web: { clientId: string; clientSecret: string };
  machine: { clientId: string; clientSecret: string };
  introspector: { clientId: string; clientSecret: string };
  projectId: string;
}
let source: Source;
let exportedA: any;

async function fillInstanceA(): Promise<Source> {
  const call = on(a);
  const org1 = ok(await call('POST', '/management/v1/orgs', { name: 'Acme Migration' })).id as string;
  const org2 = ok(await call('POST', '/management/v1/orgs', { name: 'Globex Migration' })).id as string;

  // Org 1: people (password + TOTP, initial password), a machine user with a secret, metadata.
  const personId = ok(
    await call(
      'POST',
      '/management/v1/users/human/_import',
      {
        userName: 'ada',
        profile: { firstName: 'Ada', lastName: 'Lovelace', nickName: 'ada', preferredLanguage: 'en', gender: 'GENDER_FEMALE' },
        email: { email: 'ada@acme.example', isEmailVerified: true },
        phone: { phone: '+41 79 000 00 00', isPhoneVerified: true },
        password: PASSWORD,
        otpCode: SECRET,
      },
      org1,
    ),
  ).userId as string;
  const plainId = ok(
    await call(
      'POST',
      '/management/v1/users/human',
      { userName: 'grace', profile: { firstName: 'Grace', lastName: 'Hopper' }, email: { email: 'grace@acme.example' }, initialPassword: 'Another-Pass-7' },
      org1,
    ),
  ).userId as string;
  const machineId = ok(await call('POST', '/management/v1/users/machine', { userName: 'billing', name: 'Billing', description: 'batch jobs', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' }, org1))
    .userId as string;
  const machineSecret = ok(await call('PUT', `/management/v1/users/${machineId}/secret`, {}, org1));
  ok(await call('POST', `/management/v1/users/${personId}/metadata/department`, { value: Buffer.from('research').toString('base64') }, org1));
  ok(await call('POST', `/management/v1/users/${machineId}/metadata/team`, { value: Buffer.from([0, 1, 2, 255]).toString('base64') }, org1));

  // Projects, roles, apps (OIDC web app with a secret, a public native app, an API app).
  const projectId = ok(await call('POST', '/management/v1/projects', { name: 'Portal', projectRoleAssertion: true, projectRoleCheck: true }, org1)).id as string;
  ok(
    await call(
      'POST',
      `/management/v1/projects/${projectId}/roles/_bulk`,
      {
        roles: [
          { key: 'admin', displayName: 'Admin', group: 'staff' },
          { key: 'viewer', displayName: 'Viewer' },
        ],
      },
      org1,
    ),
  );
  const web = ok(
    await call(
      'POST',
      `/management/v1/projects/${projectId}/apps/oidc`,
      {
        name: 'Portal Web',
        redirectUris: [REDIRECT],
        postLogoutRedirectUris: ['http://localhost:9999/signed-out'],
        responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
        grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
        appType: 'OIDC_APP_TYPE_WEB',
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
        accessTokenType: 'OIDC_TOKEN_TYPE_JWT',
        idTokenRoleAssertion: true,
        clockSkew: '2s',
        additionalOrigins: ['https://portal.example'],
      },
      org1,
    ),
  );
  ok(
    await call(
      'POST',
      `/management/v1/projects/${projectId}/apps/oidc`,
      { name: 'Portal CLI', redirectUris: ['http://127.0.0.1/cb'], appType: 'OIDC_APP_TYPE_NATIVE', authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE', devMode: true },
      org1,
    ),
  );
  const introspector = ok(await call('POST', `/management/v1/projects/${projectId}/apps/api`, { name: 'Portal API', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' }, org1));

  // Grants, members, policies.
  ok(await call('POST', `/management/v1/users/${personId}/grants`, { projectId, roleKeys: ['admin', 'viewer'] }, org1));
  ok(await call('POST', `/management/v1/users/${machineId}/grants`, { projectId, roleKeys: ['viewer'] }, org1));
  ok(await call('POST', '/management/v1/orgs/me/members', { userId: plainId, roles: ['ORG_USER_MANAGER'] }, org1));
  ok(await call('POST', '/management/v1/policies/lockout', { maxPasswordAttempts: '5', showLockoutFailure: true }, org1));
  ok(await call('POST', '/management/v1/policies/login', { allowUsernamePassword: true, allowRegister: false, forceMfa: true }, org1));

  // Org 2: a smaller second org.
  const bob = ok(
    await call(
      'POST',
      '/management/v1/users/human/_import',
      { userName: 'bob', profile: { firstName: 'Bob', lastName: 'Builder' }, email: { email: 'bob@globex.example' }, password: 'Bobs-Pass-123' },
      org2,
    ),
  ).userId as string;
  const p2 = ok(await call('POST', '/management/v1/projects', { name: 'Tools' }, org2)).id as string;
  ok(await call('POST', `/management/v1/projects/${p2}/roles`, { roleKey: 'user', displayName: 'User' }, org2));
  ok(await call('POST', `/management/v1/projects/${p2}/apps/api`, { name: 'Tools API', authMethodType: 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' }, org2));
  ok(await call('POST', `/management/v1/users/${bob}/grants`, { projectId: p2, roleKeys: ['user'] }, org2));
  ok(await call('POST', '/management/v1/orgs/me/members', { userId: bob, roles: ['ORG_OWNER'] }, org2));

  const person = ok(await call('GET', `/management/v1/users/${personId}`, undefined, org1)).user;
  const admin = ok(await call('POST', '/admin/v1/members/_search', {})).result[0].userId as string;
  return {
    orgIds: [org1, org2],
    adminA: admin,
    person: { userId: personId, loginName: person.preferredLoginName },
    web: { clientId: web.clientId, clientSecret: web.clientSecret },
    machine: { clientId: machineSecret.clientId, clientSecret: machineSecret.clientSecret },
    introspector: { clientId: introspector.clientId, clientSecret: introspector.clientSecret },
    projectId,
  };
}

const exportOrgs = async (server: InProcessServer) =>
  ok(await on(server)('POST', '/admin/v1/export', { orgIds: source.orgIds, withPasswords: true, withOtp: true, responseOutput: true, timeout: '1m' }));

/** The bundle without what cannot exist on B: memberships of A's bootstrap admin (a user outside the exported orgs). */
const withoutAdminA = (bundle: any) => ({
  orgs: bundle.orgs.map((org: any) => {
    const orgMembers = (org.orgMembers ?? []).filter((m: any) => m.userId !== source.adminA);
    const { orgMembers: _dropped, ...rest } = org;
    return orgMembers.length > 0 ? { ...rest, orgMembers } : rest;
  }),
});

beforeAll(async () => {
  // Both run in this process on one clock (the clock is process-wide).
  [a, b] = await Promise.all([startInProcess({ clock }), startInProcess({ clock })]);
  source = await fillInstanceA();
  exportedA = await exportOrgs(a);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe('Sesame → Sesame migration', () => {
  it('exports both orgs with everything Sesame holds', () => {
    expect(a.dataDir).not.toBe(b.dataDir);
    expect(a.port).not.toBe(b.port);
    const [org1, org2] = exportedA.orgs;
    expect(exportedA.orgs.map((o: any) => o.orgId)).toEqual([...source.orgIds].sort());
    expect(org1.org).toEqual({ name: 'Acme Migration' });
    expect(org1.orgState).toBe('ORG_STATE_ACTIVE');
    expect(org1.domains).toEqual([{ orgId: org1.orgId, domainName: 'acme-migration.localhost', isVerified: true, isPrimary: true }]);
    const ada = org1.humanUsers.find((u: any) => u.user.userName === 'ada');
    expect(ada).toMatchObject({
      userId: source.person.userId,
      state: 'USER_STATE_ACTIVE',
      user: {
        profile: { firstName: 'Ada', lastName: 'Lovelace', nickName: 'ada', displayName: 'Ada Lovelace', preferredLanguage: 'en', gender: 'GENDER_FEMALE' },
        email: { email: 'ada@acme.example', isEmailVerified: true },
        phone: { phone: '+41 79 000 00 00', isPhoneVerified: true },
        otpCode: SECRET,
      },
    });
    expect(ada.user.hashedPassword.value).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(org1.machineUsers).toEqual([
      expect.objectContaining({
        userId: expect.any(String),
        state: 'USER_STATE_ACTIVE',
        user: expect.objectContaining({ userName: 'billing', name: 'Billing', description: 'batch jobs', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' }),
        clientSecretSha256: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      }),
    ]);
    expect(org1.machineUsers[0].user.userId).toBe(org1.machineUsers[0].userId);
    expect(org1.projects).toEqual([{ projectId: source.projectId, project: { name: 'Portal', projectRoleAssertion: true, projectRoleCheck: true } }]);
    expect(org1.projectRoles).toHaveLength(2);
    expect(org1.oidcApps).toHaveLength(2);
    const web = org1.oidcApps.find((x: any) => x.app.name === 'Portal Web');
    expect(web).toMatchObject({
      clientId: source.web.clientId,
      app: { projectId: source.projectId, redirectUris: [REDIRECT], accessTokenType: 'OIDC_TOKEN_TYPE_JWT', clockSkew: '2s', idTokenRoleAssertion: true },
    });
    expect(web.clientSecretSha256).toBeDefined();
    expect(org1.oidcApps.find((x: any) => x.app.name === 'Portal CLI').clientSecretSha256).toBeUndefined();
    expect(org1.apiApps).toEqual([expect.objectContaining({ clientId: source.introspector.clientId, app: { projectId: source.projectId, name: 'Portal API' } })]);
    expect(org1.userGrants).toHaveLength(2);
    expect(org1.userMetadata).toEqual(expect.arrayContaining([{ id: source.person.userId, key: 'department', value: Buffer.from('research').toString('base64') }]));
    expect(org1.orgMembers).toEqual(expect.arrayContaining([{ userId: source.adminA, roles: ['ORG_OWNER'] }, expect.objectContaining({ roles: ['ORG_USER_MANAGER'] })]));
    expect(org1.lockoutPolicy).toEqual({ maxPasswordAttempts: 5, showLockoutFailure: true });
    expect(org1.loginPolicy).toMatchObject({ allowUsernamePassword: true, forceMfa: true });
    expect(org2.apiApps[0].app.authMethodType).toBe('API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT');
    // Excluded per the seed: no keys, PATs or instance members.
    for (const org of exportedA.orgs) for (const field of ['appKeys', 'machineKeys']) expect(org[field]).toBeUndefined();
  });

  it('imports into a fresh instance with the same ids; only A-only members are reported', async () => {
    const result = ok(await on(b)('POST', '/admin/v1/import', { timeout: '5m', dataOrgs: exportedA }));
    expect(result.errors).toEqual(source.orgIds.map((orgId) => ({ type: 'org_member', id: `${orgId}_${source.adminA}`, message: expect.stringContaining('not found') })));
    const [org1] = result.success.orgs;
    expect(result.success.orgs.map((o: any) => o.orgId)).toEqual([...source.orgIds].sort());
    expect(org1).toMatchObject({
      projectIds: [source.projectId],
      projectRoles: [`${source.projectId}_admin`, `${source.projectId}_viewer`],
      humanUserIds: expect.arrayContaining([source.person.userId]),
      machineUserIds: [expect.any(String)],
      userGrants: expect.arrayContaining([{ projectId: source.projectId, userId: source.person.userId }]),
      orgMembers: [expect.any(String)],
      userMetadata: expect.arrayContaining([{ userId: source.person.userId, key: 'department' }]),
    });
    expect(org1.oidcAppIds).toHaveLength(2);
    expect(org1.apiAppIds).toHaveLength(1);
    const user = ok(await on(b)('GET', `/management/v1/users/${source.person.userId}`, undefined, source.orgIds[0]));
    expect(user.user.preferredLoginName).toBe(source.person.loginName);
  });

  it('exports from B exactly what A exported', async () => {
    expect(await exportOrgs(b)).toEqual(withoutAdminA(exportedA));
  });

  it('a second import changes nothing and reports what exists', async () => {
    // The orgs exist now: an import creates orgs, so each is refused whole.
    const refused = ok(await on(b)('POST', '/admin/v1/import', { timeout: '5m', dataOrgs: exportedA }));
    expect(refused.errors).toEqual(source.orgIds.map((orgId) => ({ type: 'org', id: orgId, message: expect.stringContaining('already exists; nothing was imported into it') })));
    expect(refused.success).toEqual({});
    // Asked to add to them, every item is found and left as it is.
    const again = ok(await on(b)('POST', '/admin/v1/import', { timeout: '5m', addToExistingOrgs: true, dataOrgs: exportedA }));
    const types = new Set(again.errors.map((e: any) => e.type));
    expect([...types].sort()).toEqual(
      ['human_user', 'login_policy', 'lockout_policy', 'machine_user', 'oidc_app', 'api_app', 'org', 'org_member', 'project', 'project_role', 'user_grant', 'user_metadata'].sort(),
    );
    expect(again.errors.every((e: any) => /^ID=\S+ Message=/.test(e.message))).toBe(true);
    expect(again.success.orgs.every((o: any) => Object.keys(o).join() === 'orgId')).toBe(true);
    expect(await exportOrgs(b)).toEqual(withoutAdminA(exportedA));
  });

  it('on B, a person signs in with the old password and TOTP through the old client id and secret', async () => {
    const config = await oidc.discovery(new URL(b.issuer), source.web.clientId, source.web.clientSecret, oidc.ClientSecretBasic(source.web.clientSecret), {
      execute: [oidc.allowInsecureRequests],
    });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    // No wait for a fresh TOTP step: the server also accepts the previous one.
    const done = await signIn(new Agent(b), url.pathname + url.search, { loginName: source.person.loginName, password: PASSWORD }, () => totpAt(SECRET, clock.now() / 1000));
    expect(done.location, done.html?.slice(0, 500)).toMatch(/^http:\/\/localhost:9999\/callback\?/);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: state });
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(source.person.userId);
    expect(claims.amr).toEqual(expect.arrayContaining(['pwd', 'otp']));
    expect(claims.aud).toContain(source.web.clientId);
  });

  it('on B, the machine user and the API app keep their secrets', async () => {
    const basic = (c: { clientId: string; clientSecret: string }) => `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`).toString('base64')}`;
    const token = await fetch(`${b.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(source.machine) },
      body: `grant_type=client_credentials&scope=${encodeURIComponent(`openid urn:zitadel:iam:org:project:id:${source.projectId}:aud`)}`,
    });
    const body = (await token.json()) as { access_token: string };
    expect(token.status, JSON.stringify(body)).toBe(200);
    const introspection = await fetch(`${b.url}/oauth/v2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(source.introspector) },
      body: `token=${encodeURIComponent(body.access_token)}`,
    });
    expect(await introspection.json()).toMatchObject({ active: true, client_id: source.machine.clientId });
  });
});
