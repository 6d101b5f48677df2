import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, pbkdf2Sync, randomBytes, scryptSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { hashSync as argon2Hash } from '@node-rs/argon2';
import { ARGON2 } from '../src/workers/argon2-algorithms.js';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type ApiResult } from './helpers/api.js';
import { Agent, createWebApp, signIn, type WebApp } from './helpers/oidc.js';
import { HOSTILE_HASHES } from './helpers/hostile-hashes.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';
import { startServer } from './helpers/server.js';

/**
 * ImportData and ExportData against a real server: the ZITADEL migration-tool fixtures, every
 * password hash format signing in (and being upgraded), OTP, every option of both calls, bad
 * bundles, timeouts, authorization, and a bundle of more than 100 MB.
 */
let server: InProcessServer;
let web: WebApp;
let counter = 0;
const uid = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/zitadel-tools/${name}`, import.meta.url), 'utf8'));

const call = (method: string, path: string, body?: unknown, options: { token?: string; orgId?: string; rawBody?: string } = {}) =>
  api(server, method, path, { token: server.pat, ...(body === undefined ? {} : { body }), ...options });
const ok = (result: ApiResult): any => {
  if (result.status === 500)
    console.log(
      server
        .logs()
        .split('\n')
        .filter((l) => l.includes('error'))
        .slice(-3)
        .join('\n'),
    );
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  return result.body;
};
const importOrgs = async (orgs: unknown[], extra: Record<string, unknown> = {}) => ok(await call('POST', '/admin/v1/import', { timeout: '2m', dataOrgs: { orgs }, ...extra }));
const exportOrg = async (orgId: string, extra: Record<string, unknown> = {}) => ok(await call('POST', '/admin/v1/export', { orgIds: [orgId], withPasswords: true, withOtp: true, ...extra })).orgs[0];
const expectError = (result: ApiResult, status: number, code: number, message?: RegExp) => {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.code).toBe(code);
  if (status !== 405) expect(result.body.details[0]['@type']).toBe('type.googleapis.com/zitadel.v1.ErrorDetail');
  if (message) expect(result.body.message).toMatch(message);
};

const human = (userId: string, extra: Record<string, unknown> = {}) => ({
  userId,
  user: { userName: userId, profile: { firstName: 'Test', lastName: 'User' }, email: { email: `${userId}@example.com`, isEmailVerified: true }, ...extra },
});

async function signsIn(loginName: string, password: string): Promise<boolean> {
  const query = new URLSearchParams({ client_id: web.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope: 'openid', state: 's' });
  const done = await signIn(new Agent(server), `/oauth/v2/authorize?${query}`, { loginName, password });
  return done.location?.startsWith('http://localhost:9999/callback?code=') ?? false;
}

beforeAll(async () => {
  server = await startInProcess();
  web = await createWebApp(server);
});

afterAll(async () => {
  await server?.close();
});

describe('zitadel-tools bundles', () => {
  it('import without errors, the users exist with their hashes', async () => {
    const auth0 = fixture('auth0-reference-output.json');
    const keycloak = fixture('keycloak-reference-output.json');
    expect(ok(await call('POST', '/admin/v1/import', auth0))).toEqual({
      success: { orgs: [{ orgId: '123', humanUserIds: ['auth0|6437e9c2b7add15a89b4915b', 'auth0|6437fa205c7266dc77f88a6c'] }] },
    });
    // The second bundle is for the org the first created: refused unless the request says to add to it.
    expect(ok(await call('POST', '/admin/v1/import', keycloak))).toEqual({
      errors: [{ type: 'org', id: '123', message: expect.stringContaining('already exists; nothing was imported into it') }],
      success: {},
    });
    expect(ok(await call('POST', '/admin/v1/import', { ...keycloak, addToExistingOrgs: true }))).toEqual({
      errors: [{ type: 'org', id: '123', message: expect.stringContaining('IMPORT-Exist1') }],
      success: { orgs: [{ orgId: '123', humanUserIds: ['826731b2-bf17-4bd9-b45c-6a26c76ddaae'] }] },
    });

    const exported = await exportOrg('123');
    const expected = [...auth0.dataOrgs.orgs[0].humanUsers, ...keycloak.dataOrgs.orgs[0].humanUsers];
    for (const source of expected) {
      const user = exported.humanUsers.find((u: any) => u.userId === source.userId);
      expect(user.user.userName).toBe(source.user.userName);
      expect(user.user.email).toEqual(source.user.email);
      expect(user.user.hashedPassword.value).toBe(source.user.hashedPassword.value);
      expect(user.state).toBe('USER_STATE_ACTIVE');
      const view = ok(await call('GET', `/management/v1/users/${encodeURIComponent(source.userId)}`, undefined, { orgId: '123' }));
      expect(view.user.userName).toBe(source.user.userName);
    }
    // The org is named after its id, since these bundles describe users only.
    expect(exported.org).toEqual({ name: '123' });
  });
});

describe('password hashes', () => {
  const PASSWORD = 'Imported-Secret-9';
  const salt = randomBytes(16);
  const ab64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '').replace(/\+/g, '.');
  const openssl = (flag: string) => execFileSync('openssl', ['passwd', flag, PASSWORD]).toString().trim();
  const formats: Record<string, string> = {
    bcrypt2a: bcrypt.hashSync(PASSWORD, 10).replace(/^\$2b\$/, '$2a$'),
    bcrypt2b: bcrypt.hashSync(PASSWORD, 10),
    bcrypt2y: bcrypt.hashSync(PASSWORD, 10).replace(/^\$2b\$/, '$2y$'),
    argon2i: argon2Hash(PASSWORD, { algorithm: ARGON2.Argon2i, memoryCost: 8192, timeCost: 2 }),
    argon2id: argon2Hash(PASSWORD, { algorithm: ARGON2.Argon2id, memoryCost: 65536, timeCost: 3 }),
    scrypt: `$scrypt$ln=14,r=8,p=1$${ab64(salt)}$${ab64(scryptSync(PASSWORD, salt, 32, { N: 16384, r: 8, p: 1 }))}`,
    keycloak: `$pbkdf2-sha256$27500$${salt.toString('base64')}$${pbkdf2Sync(PASSWORD, salt, 27500, 64, 'sha256').toString('base64')}`,
    passlib: `$pbkdf2-sha512$25000$${ab64(salt)}$${ab64(pbkdf2Sync(PASSWORD, salt, 25000, 64, 'sha512'))}`,
    sha256crypt: openssl('-5'),
    sha512crypt: openssl('-6'),
    md5crypt: openssl('-1'),
  };
  let orgId: string;
  let domain: string;

  beforeAll(async () => {
    orgId = uid('hashes');
    const users = [
      ...Object.entries(formats).map(([name, value]) => human(`${orgId}-${name}`, { hashedPassword: { value, algorithm: 'ignored' } })),
      human(`${orgId}-plain`, { password: PASSWORD }),
      human(`${orgId}-unsupported`, { hashedPassword: { value: '$md5salted-prefix$abc$def' } }),
      human(`${orgId}-weak`, { hashedPassword: { value: bcrypt.hashSync(PASSWORD, 4) } }),
      ...Object.values(HOSTILE_HASHES).map(([value], i) => human(`${orgId}-costly-${i}`, { hashedPassword: { value } })),
    ];
    const result = await importOrgs([{ orgId, org: { name: orgId }, humanUsers: users }]);
    expect(result.errors).toEqual([
      { type: 'human_user', id: `${orgId}-unsupported`, message: expect.stringMatching(/^ID=CRYPT-Hash1 Message=.*Errors\.Hash\.NotSupported/) },
      { type: 'human_user', id: `${orgId}-weak`, message: expect.stringMatching(/Errors\.User\.Password\.Invalid/) },
      // Each hash that would take too long to verify, with the reason in the error list.
      ...Object.values(HOSTILE_HASHES).map(([, reason], i) => ({
        type: 'human_user',
        id: `${orgId}-costly-${i}`,
        message: expect.stringMatching(new RegExp(`${reason.source}.*Errors\\.User\\.Password\\.Invalid`)),
      })),
    ]);
    expect(result.success.orgs[0].humanUserIds).toHaveLength(Object.keys(formats).length + 1);
    domain = (await exportOrg(orgId)).domains[0].domainName;
  });

  for (const name of ['bcrypt2a', 'bcrypt2b', 'bcrypt2y', 'argon2i', 'argon2id', 'scrypt', 'keycloak', 'passlib', 'sha256crypt', 'sha512crypt', 'md5crypt']) {
    it(`${name}: signs in with the known password only, then the hash is Sesame's argon2id`, async () => {
      const loginName = `${orgId}-${name}@${domain}`;
      expect(await signsIn(loginName, 'wrong-password')).toBe(false);
      expect(await signsIn(loginName, PASSWORD)).toBe(true);
      const user = (await exportOrg(orgId)).humanUsers.find((u: any) => u.userId === `${orgId}-${name}`);
      expect(user.user.hashedPassword.value).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      expect(await signsIn(loginName, PASSWORD)).toBe(true);
    });
  }

  it('hashes a plaintext password on import', async () => {
    const user = (await exportOrg(orgId)).humanUsers.find((u: any) => u.userId === `${orgId}-plain`);
    expect(user.user.hashedPassword.value).toMatch(/^\$argon2id\$/);
    expect(JSON.stringify(user)).not.toContain(PASSWORD);
    expect(await signsIn(`${orgId}-plain@${domain}`, PASSWORD)).toBe(true);
  });
});

describe('OTP', () => {
  it('imports otpCode as a TOTP secret and exports it back only withOtp', async () => {
    const orgId = uid('otp');
    const result = await importOrgs([
      { orgId, org: { name: orgId }, humanUsers: [human(`${orgId}-a`, { password: 'x-Password-1', otpCode: 'jbsw y3dp ehpk 3pxp' }), human(`${orgId}-b`, { otpCode: 'not base32!' })] },
    ]);
    expect(result.errors).toEqual([{ type: 'human_user_otp', id: `${orgId}-b`, message: expect.stringContaining('base32') }]);
    expect(result.success.orgs[0].humanUserIds).toEqual([`${orgId}-a`, `${orgId}-b`]);
    const withOtp = await exportOrg(orgId);
    expect(withOtp.humanUsers[0].user.otpCode).toBe('JBSWY3DPEHPK3PXP');
    expect(withOtp.humanUsers[1].user.otpCode).toBeUndefined();
    const without = await exportOrg(orgId, { withOtp: false, withPasswords: false });
    expect(JSON.stringify(without)).not.toMatch(/otpCode|hashedPassword|clientSecretSha256/);
  });
});

describe('export options', () => {
  let one: string;
  let two: string;
  beforeAll(async () => {
    one = uid('export-one');
    two = uid('export-two');
    await importOrgs([
      { orgId: one, org: { name: one }, humanUsers: [human(`${one}-u`, { password: 'Pass-word-1' })] },
      { orgId: two, org: { name: two }, orgState: 'ORG_STATE_INACTIVE' },
    ]);
  });

  it('orgIds selects, excludedOrgIds filters, empty means all', async () => {
    const ids = async (body: Record<string, unknown>) => ok(await call('POST', '/admin/v1/export', body)).orgs.map((o: any) => o.orgId);
    expect(await ids({ orgIds: [two, one] })).toEqual([one, two].sort());
    expect(await ids({ orgIds: [one, two], excludedOrgIds: [two] })).toEqual([one]);
    const all = await ids({});
    expect(all).toEqual(expect.arrayContaining([one, two, '123']));
    expect(await ids({ excluded_org_ids: [one] })).toEqual(all.filter((id: string) => id !== one));
    expect(await ids({ orgIds: ['does-not-exist'] })).toEqual([]);
  });

  it('keeps the org state and honours snake_case', async () => {
    const body = ok(await call('POST', '/admin/v1/export', { org_ids: [two], with_passwords: true, response_output: true }));
    expect(body.orgs[0].orgState).toBe('ORG_STATE_INACTIVE');
  });

  it('fails cleanly when the timeout runs out, refuses bad timeouts and unsupported outputs', async () => {
    expectError(await call('POST', '/admin/v1/export', { timeout: '1ns' }), 504, 4, /ran out of time/);
    expectError(await call('POST', '/admin/v1/export', { timeout: 'soon' }), 400, 3, /timeout/);
    expectError(await call('POST', '/admin/v1/export', { localOutput: { path: '/tmp/x' } }), 501, 12);
    expectError(await call('POST', '/admin/v1/export', { s3Output: { bucket: 'x' } }), 501, 12);
    expectError(await call('POST', '/admin/v1/export', { gcsOutput: { bucket: 'b', path: 'p', serviceaccountJson: 'e30=' } }), 400, 3, /client_email/);
    expectError(await call('POST', '/admin/v1/export', { orgIds: 'x' }), 400, 3, /orgIds/);
    expect(ok(await call('POST', '/admin/v1/export', { timeout: '30m0s', orgIds: [one] })).orgs).toHaveLength(1);
  });
});

describe('import', () => {
  it("an inactive org's applications cannot authenticate, nor start a sign-in (one rule: app, project and org active)", async () => {
    const secret = 'inactive-org-secret-0123456789';
    const digest = createHash('sha256').update(secret).digest('base64');
    const make = (orgId: string, orgState: string) => ({
      orgId,
      org: { name: orgId },
      orgState,
      projects: [{ projectId: `${orgId}-p`, project: { name: 'P' } }],
      apiApps: [{ appId: `${orgId}-a`, clientId: `${orgId}-api`, clientSecretSha256: digest, app: { projectId: `${orgId}-p`, name: 'API', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' } }],
      oidcApps: [
        { appId: `${orgId}-o`, clientId: `${orgId}-web`, app: { projectId: `${orgId}-p`, name: 'Web', redirectUris: ['https://app.example/cb'], authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE' } },
      ],
    });
    const active = uid('usable-active');
    const inactive = uid('usable-inactive');
    const result = await importOrgs([make(active, 'ORG_STATE_ACTIVE'), make(inactive, 'ORG_STATE_INACTIVE')], { withPasswords: true });
    expect(result.errors).toBeUndefined();
    const introspect = (clientId: string) =>
      fetch(`${server.url}/oauth/v2/introspect`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'token=whatever',
      });
    expect((await introspect(`${active}-api`)).status).toBe(200);
    const refused = await introspect(`${inactive}-api`);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_client');
    const authorize = (clientId: string) =>
      fetch(
        `${server.url}/oauth/v2/authorize?client_id=${clientId}&redirect_uri=${encodeURIComponent('https://app.example/cb')}&response_type=code&scope=openid&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`,
        { redirect: 'manual' },
      );
    expect((await authorize(`${active}-web`)).status).toBe(302);
    const page = await authorize(`${inactive}-web`);
    expect(page.status).toBe(400);
    expect(page.headers.get('location')).toBeNull();
  });

  it('imports every part Sesame holds, keeping ids and client ids', async () => {
    const orgId = uid('full');
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = Buffer.from(publicKey.export({ type: 'spki', format: 'pem' }).toString()).toString('base64');
    const result = await importOrgs([
      {
        orgId,
        org: { name: orgId },
        domains: [{ domainName: `${orgId}.example.com`, isVerified: true, isPrimary: true, validationType: 'DOMAIN_VALIDATION_TYPE_DNS' }],
        lockoutPolicy: { maxPasswordAttempts: 3 },
        humanUsers: [{ ...human(`${orgId}-h`, { password: 'Pass-word-1' }), state: 'USER_STATE_INACTIVE' }],
        machineUsers: [{ userId: `${orgId}-m`, user: { userName: 'svc', name: 'Service' } }, { user: { userName: 'svc2', name: 'Service 2', userId: `${orgId}-m2` } }],
        machineKeys: [{ keyId: `${orgId}-mk`, userId: `${orgId}-m`, type: 'KEY_TYPE_JSON', expirationDate: '2099-01-01T00:00:00Z', publicKey: pem }],
        userMetadata: [{ id: `${orgId}-h`, key: 'k', value: Buffer.from('v').toString('base64') }],
        projects: [{ projectId: `${orgId}-p`, project: { name: 'P', hasProjectCheck: true } }],
        projectRoles: [{ projectId: `${orgId}-p`, roleKey: 'r1', displayName: 'R1' }],
        oidcApps: [{ appId: `${orgId}-o`, clientId: `${orgId}-client`, app: { projectId: `${orgId}-p`, name: 'Web', redirectUris: ['https://app.example/cb'] } }],
        apiApps: [{ appId: `${orgId}-a`, app: { projectId: `${orgId}-p`, name: 'API', authMethodType: 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' } }],
        appKeys: [{ id: `${orgId}-ak`, projectId: `${orgId}-p`, appId: `${orgId}-a`, type: 'KEY_TYPE_JSON', publicKey: pem }],
        userGrants: [{ userId: `${orgId}-h`, projectId: `${orgId}-p`, roleKeys: ['r1'] }],
        orgMembers: [{ userId: `${orgId}-h`, roles: ['ORG_OWNER'] }],
        projectMembers: [{ projectId: `${orgId}-p`, userId: `${orgId}-m`, roles: ['PROJECT_OWNER'] }],
      },
    ]);
    expect(result.errors).toBeUndefined();
    expect(result.success.orgs[0]).toEqual({
      orgId,
      projectIds: [`${orgId}-p`],
      projectRoles: [`${orgId}-p_r1`],
      oidcAppIds: [`${orgId}-o`],
      apiAppIds: [`${orgId}-a`],
      humanUserIds: [`${orgId}-h`],
      machineUserIds: [`${orgId}-m`, `${orgId}-m2`],
      userGrants: [{ projectId: `${orgId}-p`, userId: `${orgId}-h` }],
      orgMembers: [`${orgId}-h`],
      projectMembers: [{ projectId: `${orgId}-p`, userId: `${orgId}-m` }],
      userMetadata: [{ userId: `${orgId}-h`, key: 'k' }],
      domains: [`${orgId}.example.com`],
      appKeys: [`${orgId}-ak`],
      machineKeys: [`${orgId}-mk`],
    });
    const exported = await exportOrg(orgId);
    expect(exported.oidcApps[0].clientId).toBe(`${orgId}-client`);
    expect(exported.apiApps[0].clientId).toMatch(/^\d+$/);
    expect(exported.humanUsers[0].state).toBe('USER_STATE_INACTIVE');
    expect(exported.domains.find((d: any) => d.isPrimary).domainName).toBe(`${orgId}.example.com`);
    // showLockoutFailure absent is false (protojson's zero, ZITADEL's import), and stays so through an export.
    expect(exported.lockoutPolicy).toEqual({ maxPasswordAttempts: 3 });
    expect(exported.projectMembers).toEqual([{ projectId: `${orgId}-p`, userId: `${orgId}-m`, roles: ['PROJECT_OWNER'] }]);
    const user = ok(await call('GET', `/management/v1/users/${orgId}-m`, undefined, { orgId }));
    expect(user.user.preferredLoginName).toBe(`svc@${orgId}.example.com`);
    const key = ok(await call('GET', `/management/v1/users/${orgId}-m/keys/${orgId}-mk`, undefined, { orgId }));
    expect(key.key.expirationDate).toBe('2099-01-01T00:00:00Z');
  });

  it('converts a v1 bundle and reports the parts Sesame does not support', async () => {
    const orgId = uid('v1');
    const result = ok(
      await call('POST', '/admin/v1/import', {
        timeout: '10m',
        data_orgsv1: {
          orgs: [
            {
              org_id: orgId,
              org: { name: orgId },
              iam_policy: { user_login_must_be_domain: true },
              second_factors: [{ type: 'SECOND_FACTOR_TYPE_OTP' }],
              human_users: [
                {
                  user_id: `${orgId}-u`,
                  user: {
                    user_name: 'u',
                    profile: { first_name: 'V', last_name: 'One' },
                    email: { email: 'v1@example.com' },
                    hashed_password: { value: bcrypt.hashSync('pw-v1-pass', 10), algorithm: 'bcrypt' },
                  },
                },
              ],
              trigger_actions: [{ flow_type: 'FLOW_TYPE_EXTERNAL_AUTHENTICATION', trigger_type: 'TRIGGER_TYPE_POST_AUTHENTICATION', action_ids: ['a1'] }],
              actions: [{ action_id: 'a1', action: { name: 'x', script: 'function x() {}' } }],
              login_texts: [{ language: 'de' }],
              project_grants: [{ grant_id: 'g', project_grant: { project_id: 'p', granted_org_id: 'o' } }],
              unknown_field: { ignored: true },
            },
          ],
        },
      }),
    );
    expect(result.success.orgs).toEqual([{ orgId, humanUserIds: [`${orgId}-u`] }]);
    expect(result.errors.map((e: any) => [e.type, e.id])).toEqual([
      ['login_texts', `${orgId}_de`],
      ['action', 'a1'],
      ['trigger_action', '1_1'],
      ['project_grant', `${orgId}_p_o`],
    ]);
    expect(result.errors[0].message).toMatch(/^ID=IMPORT-Unsup1 Message=Sesame does not support/);
    // v1's iamPolicy is the org's domain policy, with the instance defaults for what v1 lacks.
    const domain = ok(await call('GET', '/management/v1/policies/domain', undefined, { orgId }));
    expect(domain.policy).toMatchObject({ userLoginMustBeDomain: true });
    expect(domain.policy.isDefault).toBeUndefined();
  });

  it('reports bad items and imports the rest: wrong types, duplicate ids, missing references', async () => {
    const orgId = uid('bad');
    const noName = uid('noname');
    const result = await importOrgs([
      {
        orgId,
        org: { name: orgId },
        humanUsers: [human(`${orgId}-1`), human(`${orgId}-1`), { userId: `${orgId}-2`, user: { userName: 5 } }, human(`${orgId}-3`, { email: { email: 'no-at-sign' } })],
        machineUsers: 'not a list',
        projects: [
          { projectId: `${orgId}-p`, project: { name: 'P' } },
          { projectId: `${orgId}-p`, project: { name: 'P again' } },
        ],
        projectRoles: [
          { projectId: 'missing-project', roleKey: 'r' },
          { projectId: `${orgId}-p`, roleKey: 'r' },
          { projectId: `${orgId}-p`, roleKey: 'r' },
        ],
        oidcApps: [
          { appId: `${orgId}-o`, app: { projectId: 'missing-project', name: 'Web' } },
          { appId: `${orgId}-o2`, app: { name: 'No project' } },
        ],
        apiApps: [{ appId: `${orgId}-a`, app: { projectId: `${orgId}-p`, name: 'API', authMethodType: 'NOT_AN_ENUM' } }],
        userMetadata: [{ id: 'missing-user', key: 'k', value: 'dg==' }],
        userGrants: [
          { userId: `${orgId}-1`, projectId: 'missing-project', roleKeys: [] },
          { userId: `${orgId}-1`, projectId: `${orgId}-p`, roleKeys: ['nope'] },
        ],
        orgMembers: [
          { userId: `${orgId}-1`, roles: ['NOT_A_ROLE'] },
          { userId: 'missing-user', roles: ['ORG_OWNER'] },
        ],
      },
      { orgId: '', org: { name: 'no id' } },
      { orgId: noName, org: { name: '' } },
    ]);
    // protojson omits an empty id, as for the org without one.
    const errors = result.errors.map((e: any) => `${e.type} ${e.id ?? ''}`);
    expect([...errors].sort()).toEqual(
      [
        'org ',
        `org ${noName}`,
        `machine_user ${orgId}`,
        `human_user ${orgId}-1`,
        `human_user ${orgId}-2`,
        `human_user ${orgId}-3`,
        `api_app ${orgId}-a`,
        `user_metadata missing-user_k`,
        `project ${orgId}-p`,
        `project_role missing-project_r`,
        `project_role ${orgId}-p_r`,
        `oidc_app ${orgId}-o`,
        `oidc_app ${orgId}-o2`,
        `user_grant ${orgId}_missing-project_${orgId}-1`,
        `user_grant ${orgId}_${orgId}-p_${orgId}-1`,
        `org_member ${orgId}_${orgId}-1`,
        `org_member ${orgId}_missing-user`,
      ].sort(),
    );
    // Phase order: all of phase 1 (per org), then grants, then members.
    expect(errors.indexOf(`user_grant ${orgId}_missing-project_${orgId}-1`)).toBeGreaterThan(errors.indexOf(`org ${noName}`));
    expect(errors.indexOf(`org_member ${orgId}_${orgId}-1`)).toBeGreaterThan(errors.indexOf(`user_grant ${orgId}_${orgId}-p_${orgId}-1`));
    const message = (type: string, id: string) => result.errors.find((e: any) => e.type === type && e.id === id).message;
    expect(message('human_user', `${orgId}-1`)).toMatch(/already exists/);
    expect(message('human_user', `${orgId}-2`)).toMatch(/user\.userName/);
    expect(message('machine_user', orgId)).toMatch(/machineUsers must be a list/);
    expect(message('oidc_app', `${orgId}-o`)).toMatch(/project missing-project not found/);
    expect(message('oidc_app', `${orgId}-o2`)).toMatch(/projectId is required/);
    expect(message('user_grant', `${orgId}_${orgId}-p_${orgId}-1`)).toMatch(/unknown role keys: nope/);
    expect(message('org_member', `${orgId}_${orgId}-1`)).toMatch(/unknown roles NOT_A_ROLE/);
    expect(result.success.orgs).toEqual([{ orgId, projectIds: [`${orgId}-p`], projectRoles: [`${orgId}-p_r`], humanUserIds: [`${orgId}-1`] }]);
  });

  it('rejects malformed requests with ZITADEL error bodies and imports nothing', async () => {
    const orgId = uid('never');
    const bundle = { orgs: [{ orgId, org: { name: orgId } }] };
    const raw = (rawBody: string) => call('POST', '/admin/v1/import', undefined, { rawBody });
    expectError(await raw(''), 400, 3, /empty/);
    expectError(await raw(JSON.stringify({ timeout: '1m', dataOrgs: bundle }).slice(0, -9)), 400, 3, /not valid JSON/);
    expectError(await raw('{"timeout":"1m","dataOrgs":{"orgs":[{"orgId":"x",}]}}'), 400, 3, /not valid JSON/);
    expectError(await raw('[]'), 400, 3, /JSON object/);
    expectError(await call('POST', '/admin/v1/import', { dataOrgs: bundle }), 400, 3, /timeout is required/);
    expectError(await call('POST', '/admin/v1/import', { timeout: 'ten minutes', dataOrgs: bundle }), 400, 3, /not a duration/);
    expectError(await call('POST', '/admin/v1/import', { timeout: '1m' }), 400, 3, /one of dataOrgs/);
    expectError(await call('POST', '/admin/v1/import', { timeout: '1m', dataOrgs: bundle, dataOrgsv1: bundle }), 400, 3, /only one/);
    expectError(await call('POST', '/admin/v1/import', { timeout: '1m', dataOrgs: [] }), 400, 3, /must be an object/);
    expectError(await call('POST', '/admin/v1/import', { timeout: '1m', dataOrgs: { orgs: { orgId } } }), 400, 3, /orgs must be a list/);
    expectError(await call('POST', '/admin/v1/import', { timeout: '1m', dataOrgs: { orgs: ['x'] } }), 400, 3, /orgs\[0\]/);
    expectError(await call('POST', '/admin/v1/import', { timeout: '1m', dataOrgsS3: { bucket: 'b' } }), 501, 12);
    expectError(await call('POST', '/admin/v1/import', { timeout: '1ns', dataOrgs: bundle }), 504, 4, /ran out of time.*nothing was imported/);
    expectError(await call('GET', '/admin/v1/import'), 405, 12);
    expect((await call('POST', '/admin/v1/export', { orgIds: [orgId] })).body.orgs).toEqual([]);
  });

  it('reports hostile nesting per item instead of failing the call', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const orgId = uid('deep');
    const result = await importOrgs([{ orgId: deep }, { orgId, org: { name: orgId }, humanUsers: [deep, human(`${orgId}-ok`)] }]);
    expect(result.errors.map((e: any) => [e.type, e.id ?? ''])).toEqual([
      ['org', ''],
      ['human_user', ''],
    ]);
    expect(result.errors[1].message).toMatch(/nested deeper/);
    expect(result.success.orgs).toEqual([{ orgId, humanUserIds: [`${orgId}-ok`] }]);
  });

  it('imports an empty bundle', async () => {
    expect(ok(await call('POST', '/admin/v1/import', { timeout: '1m', dataOrgs: {} }))).toEqual({ success: {} });
  });
});

describe('existing organizations and the management project', () => {
  const PEM = Buffer.from(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString()).toString('base64');
  const SECRET = 'known-secret-0123456789abcdef';
  const DIGEST = createHash('sha256').update(SECRET).digest('base64');
  let defaultOrg: string;
  let defaultDomain: string;
  let management: string;
  let managementApp: string;
  beforeAll(async () => {
    ({ id: defaultOrg, primaryDomain: defaultDomain } = ok(await call('GET', '/management/v1/orgs/me')).org);
    management = server.app.ctx.instance.managementProjectId;
    // An app the instance owner put there through the management API (an instance role may).
    managementApp = ok(await call('POST', `/management/v1/projects/${management}/apps/api`, { name: uid('console-api'), authMethodType: 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' })).appId;
  });

  /** The finding: a foothold in the default org and the management project, passed off as an import. */
  const foothold = (tag: string) => ({
    orgId: defaultOrg,
    org: { name: 'Sesame' },
    machineUsers: [{ userId: `${tag}-m`, user: { userName: `${tag}-m`, name: 'Intruder' }, clientSecretSha256: DIGEST }],
    humanUsers: [human(`${tag}-h`, { password: 'Pass-word-1' })],
    projects: [{ projectId: `${tag}-p`, project: { name: `${tag} project` } }],
    projectRoles: [{ projectId: management, roleKey: `${tag}-role` }],
    oidcApps: [{ appId: `${tag}-o`, clientId: `${tag}-client`, clientSecretSha256: DIGEST, app: { projectId: management, name: `${tag} console`, redirectUris: ['https://evil.example/cb'] } }],
    apiApps: [{ appId: `${tag}-a`, clientId: `${tag}-api`, clientSecretSha256: DIGEST, app: { projectId: management, name: `${tag} api`, authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' } }],
    appKeys: [{ id: `${tag}-k`, projectId: management, appId: managementApp, type: 'KEY_TYPE_JSON', publicKey: PEM }],
    userGrants: [{ userId: `${tag}-h`, projectId: management, roleKeys: [] }],
    orgMembers: [{ userId: `${tag}-m`, roles: ['ORG_OWNER'] }],
    projectMembers: [{ projectId: management, userId: `${tag}-m`, roles: ['PROJECT_OWNER'] }],
  });
  // The project's apps besides the console's own (made at the first start).
  const managementApps = async () =>
    ok(await call('POST', `/management/v1/projects/${management}/apps/_search`, {}))
      .result.filter((a: any) => a.oidcConfig?.clientId !== 'sesame-console')
      .map((a: any) => a.id);
  const managementRoles = async () => ok(await call('POST', `/management/v1/projects/${management}/roles/_search`, {})).result ?? [];

  it('an import creates orgs: an entry naming an existing org (the default org) is refused whole, nothing written', async () => {
    const tag = uid('foothold');
    const result = await importOrgs([foothold(tag)]);
    expect(result).toEqual({
      errors: [{ type: 'org', id: defaultOrg, message: expect.stringMatching(/^ID=ORG-lapo2m Message=organization \S+ already exists; nothing was imported into it .*addToExistingOrgs/) }],
      success: {},
    });
    for (const id of [`${tag}-m`, `${tag}-h`]) expectError(await call('GET', `/management/v1/users/${id}`), 404, 5);
    expectError(await call('GET', `/management/v1/projects/${tag}-p`), 404, 5);
    expect(await managementApps()).toEqual([managementApp]);
    expect(await managementRoles()).toEqual([]);
    expect(ok(await call('POST', '/management/v1/orgs/me/members/_search', {})).result.map((m: any) => m.userId)).not.toContain(`${tag}-m`);
    // The machine user's known secret opens nothing.
    const token = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${tag}-m@${defaultDomain}:${SECRET}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&scope=openid',
    });
    expect(token.status).toBe(401);
    // An entry repeated within one bundle is refused too: the first creates the org, the second would add to it.
    const twice = uid('twice');
    const repeated = await importOrgs([
      { orgId: twice, org: { name: twice } },
      { orgId: twice, humanUsers: [human(`${twice}-late`)] },
    ]);
    expect(repeated.errors).toEqual([{ type: 'org', id: twice, message: expect.stringContaining('already exists; nothing was imported') }]);
    expect(repeated.success.orgs).toEqual([{ orgId: twice }]);
    expectError(await call('GET', `/management/v1/users/${twice}-late`, undefined, { orgId: twice }), 404, 5);
  });

  it('addToExistingOrgs adds to an existing org and reports it; nothing ever goes into the management project', async () => {
    const tag = uid('asked');
    const result = await importOrgs([foothold(tag)], { addToExistingOrgs: true });
    const errors = Object.fromEntries(result.errors.map((e: any) => [`${e.type} ${e.id}`, e.message]));
    expect(errors).toEqual({
      [`org ${defaultOrg}`]: expect.stringMatching(/^ID=IMPORT-Exist1 Message=organization \S+ already exists; the bundle's parts were added to it/),
      [`project_role ${management}_${tag}-role`]: expect.stringMatching(/^ID=IMPORT-Mgmt1 Message=project \S+ is the instance's management project: nothing is imported into it$/),
      [`oidc_app ${tag}-o`]: expect.stringContaining('IMPORT-Mgmt1'),
      [`api_app ${tag}-a`]: expect.stringContaining('IMPORT-Mgmt1'),
      [`app_key ${tag}-k`]: expect.stringContaining('IMPORT-Mgmt1'),
      [`user_grant ${defaultOrg}_${management}_${tag}-h`]: expect.stringContaining('IMPORT-Mgmt1'),
      [`project_member ${defaultOrg}_${management}_${tag}-m`]: expect.stringContaining('IMPORT-Mgmt1'),
    });
    // What the request asked for (the org's own users, projects and members) is there, and listed.
    expect(result.success.orgs).toEqual([{ orgId: defaultOrg, projectIds: [`${tag}-p`], humanUserIds: [`${tag}-h`], machineUserIds: [`${tag}-m`], orgMembers: [`${tag}-m`] }]);
    expect(await managementApps()).toEqual([managementApp]);
    expect(await managementRoles()).toEqual([]);
    expectError(await call('GET', `/management/v1/projects/${management}/apps/${managementApp}/keys/${tag}-k`), 404, 5);
    expect(ok(await call('POST', '/admin/v1/export', { orgIds: [defaultOrg] })).orgs[0].projectMembers).toBeUndefined();
  });

  it("a user grant names a project of the grant's own org only", async () => {
    const victim = uid('victim');
    await importOrgs([
      {
        orgId: victim,
        org: { name: victim },
        projects: [{ projectId: `${victim}-p`, project: { name: 'P', projectRoleCheck: true } }],
        projectRoles: [{ projectId: `${victim}-p`, roleKey: 'admin' }],
      },
    ]);
    const other = uid('other');
    const result = await importOrgs([{ orgId: other, org: { name: other }, humanUsers: [human(`${other}-u`)], userGrants: [{ userId: `${other}-u`, projectId: `${victim}-p`, roleKeys: ['admin'] }] }]);
    expect(result.errors).toEqual([{ type: 'user_grant', id: `${other}_${victim}-p_${other}-u`, message: `ID=PROJECT-3M9sd Message=project ${victim}-p not found` }]);
    expect(result.success.orgs).toEqual([{ orgId: other, humanUserIds: [`${other}-u`] }]);
  });

  it('refuses an addToExistingOrgs that is not a boolean, before anything is imported', async () => {
    const orgId = uid('flag');
    expectError(
      await call('POST', '/admin/v1/import', { timeout: '1m', addToExistingOrgs: 'yes', dataOrgs: { orgs: [{ orgId, org: { name: orgId } }] } }),
      400,
      3,
      /addToExistingOrgs must be true or false/,
    );
    // snake_case, as every field of the request.
    expectError(await call('POST', '/admin/v1/import', { timeout: '1m', add_to_existing_orgs: 1, dataOrgs: { orgs: [{ orgId, org: { name: orgId } }] } }), 400, 3, /addToExistingOrgs/);
    expect(ok(await call('POST', '/admin/v1/export', { orgIds: [orgId] })).orgs).toEqual([]);
  });
});

describe('imports answered before they are over (POST /admin/v1/imports)', () => {
  /** Polls the job until it is over; every answer seen on the way is kept. */
  const untilOver = async (id: string) => {
    const seen: any[] = [];
    for (;;) {
      const { job } = ok(await call('GET', `/admin/v1/imports/${id}`));
      seen.push(job);
      if (job.state !== 'running') return { job, seen };
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('runs the import after answering, shows its progress and then the report ImportData would answer', async () => {
    const defaultOrgId = ok(await call('GET', '/management/v1/orgs/me')).org.id;
    const a = uid('job-a');
    const b = uid('job-b');
    const orgs = [
      { orgId: a, org: { name: a }, humanUsers: [human(`${a}-h`)], projects: [{ projectId: `${a}-p`, project: { name: 'P' } }] },
      { orgId: b, org: { name: b }, machineUsers: [{ userId: `${b}-m`, user: { userName: 'svc', name: 'Service' } }], userGrants: [{ userId: `${b}-m`, projectId: 'nowhere', roleKeys: [] }] },
      // The default org exists: refused whole, and still counted as done.
      { orgId: defaultOrgId, org: { name: 'again' } },
    ];
    const { id } = ok(await call('POST', '/admin/v1/imports', { timeout: '2m', dataOrgs: { orgs } }));
    expect(id).toMatch(/^\d+$/);
    const { job } = await untilOver(id);
    expect(job).toMatchObject({ id, state: 'done', phase: 'members', orgsTotal: 3, orgsDone: 3, users: 2, projects: 1 });
    expect(job.apps ?? 0).toBe(0); // protojson: a zero is left out
    expect(job.report.success.orgs.map((o: { orgId: string }) => o.orgId)).toEqual([a, b]);
    expect(job.report.success.orgs[0].humanUserIds).toEqual([`${a}-h`]);
    const errors = job.report.errors.map((e: { type: string; message: string }) => `${e.type}: ${e.message}`);
    expect(errors.join('\n')).toMatch(/already exists/);
    expect(errors.join('\n')).toMatch(/user_grant.*not found/);
    expect(job.errors).toBe(job.report.errors.length);
    // What it imported is there.
    expect(ok(await call('GET', `/management/v1/users/${a}-h`, undefined, { orgId: a })).user.id).toBe(`${a}-h`);
    // The listing shows it, newest first, without the report.
    const listed = ok(await call('GET', '/admin/v1/imports')).result;
    expect(listed[0]).toMatchObject({ id, state: 'done', orgsDone: 3 });
    expect(listed[0].report).toBeUndefined();
  });

  it('records a failure: the timeout ran out', async () => {
    const { id } = ok(await call('POST', '/admin/v1/imports', { timeout: '1ns', dataOrgs: { orgs: [{ orgId: uid('late'), org: { name: 'late' } }] } }));
    const { job } = await untilOver(id);
    expect(job.state).toBe('failed');
    expect(job.error).toMatchObject({ code: 'DeadlineExceeded', id: 'IMPORT-T1me0' });
    expect(job.error.message).toMatch(/ran out of time/);
  });

  it('refuses a bad request at once, as ImportData does, and records nothing', async () => {
    const before = ok(await call('GET', '/admin/v1/imports')).result?.length ?? 0;
    expectError(await call('POST', '/admin/v1/imports', { timeout: '1m' }), 400, 3, /one of dataOrgs/);
    expectError(await call('POST', '/admin/v1/imports', { timeout: 'soon', dataOrgs: { orgs: [] } }), 400, 3, /not a duration/);
    expect(ok(await call('GET', '/admin/v1/imports')).result?.length ?? 0).toBe(before);
  });

  it('answers an unknown job with NotFound', async () => {
    expectError(await call('GET', '/admin/v1/imports/123456789'), 404, 5, /import not found/);
    expectError(await call('GET', '/admin/v1/imports/..%2Fx'), 404, 5);
  });
});

describe('authorization', () => {
  let orgOwnerPat: string;
  beforeAll(async () => {
    const org = ok(await call('POST', '/management/v1/orgs', { name: uid('owners') })).id;
    const user = ok(await call('POST', '/management/v1/users/machine', { userName: 'owner', name: 'Owner' }, { orgId: org })).userId;
    ok(await call('POST', '/management/v1/orgs/me/members', { userId: user, roles: ['ORG_OWNER'] }, { orgId: org }));
    ok(await call('POST', '/admin/v1/members', { userId: user, roles: ['IAM_OWNER_VIEWER'] }));
    orgOwnerPat = ok(await call('POST', `/management/v1/users/${user}/pats`, {}, { orgId: org })).token;
  });

  it('needs an instance owner: 401 without a token, 403 for anyone else', async () => {
    for (const path of ['/admin/v1/export', '/admin/v1/import', '/admin/v1/imports']) {
      const body = { timeout: '1m', dataOrgs: { orgs: [] } };
      expectError(await api(server, 'POST', path, { body }), 401, 16);
      expectError(await api(server, 'POST', path, { body, token: 'not-a-token' }), 401, 16);
      expectError(await api(server, 'POST', path, { body, token: orgOwnerPat }), 403, 7, /iam\.write/);
    }
    // An import's progress and report are the instance owner's too.
    const { id } = ok(await call('POST', '/admin/v1/imports', { timeout: '1m', dataOrgs: { orgs: [] } }));
    for (const path of ['/admin/v1/imports', `/admin/v1/imports/${id}`]) {
      expectError(await api(server, 'GET', path), 401, 16);
      expectError(await api(server, 'GET', path, { token: orgOwnerPat }), 403, 7, /iam\.write/);
    }
  });

  it('refuses an unauthenticated upload before reading it', async () => {
    // The body never comes: an answer at all shows the server did not wait for it (a server that
    // did would leave this hanging until uWS drops the idle connection, an error). No time limit,
    // which a busy machine could exceed.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${server.url}/admin/v1/import`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(200 * 1024 * 1024) } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
        req.destroy();
      });
      req.on('error', reject);
      req.write('{"timeout":"1m"');
    });
    expect(status).toBe(401);
  });

  it('refuses a chunked upload whose token the store does not know once a little of it has come, without reading the rest', async () => {
    // The token is checked against the store (asynchronously) while the upload starts; the body
    // declares no length and never ends: only an answer once the refusal is known ends this.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/admin/v1/import`,
        { method: 'POST', headers: { authorization: 'Bearer not-a-token', 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
          req.destroy();
        },
      );
      req.on('error', reject);
      req.write(`{"timeout":"1m","data":"${'x'.repeat(100 * 1024)}`);
    });
    expect(status).toBe(401);
  });

  it('answers a declared body above 512 MiB with an error, not a crash', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${server.url}/admin/v1/import`, { method: 'POST', headers: { authorization: `Bearer ${server.pat}`, 'content-length': String(600 * 1024 * 1024) } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
        req.destroy();
      });
      req.on('error', reject);
      req.write('{');
    });
    expect(status).toBe(400);
  });
});

describe('large bundles', () => {
  // The peak memory measured is the server process's own: a spawned server, not this one.
  it('accepts a bundle of more than 100 MB with modest memory', async () => {
    const server = await startServer();
    try {
      const orgId = uid('large');
      const users = Array.from({ length: 2000 }, (_, i) => human(`${orgId}-${i}`, { hashedPassword: { value: '$2b$10$CSZ2JarG4XYbGa.JkfpqnO2wrlbfp5eb5LScHSGo9XGeZ.a.Ic54S' } }));
      // Most of the bytes are an unknown field: read past, never parsed into objects.
      const filler = 'x'.repeat(101 * 1024 * 1024);
      const body = `{"timeout":"5m","dataOrgs":{"orgs":[{"orgId":"${orgId}","org":{"name":"${orgId}"},"padding":"${filler}","humanUsers":${JSON.stringify(users)}}]}}`;
      expect(body.length).toBeGreaterThan(100 * 1024 * 1024);
      const res = await fetch(`${server.url}/admin/v1/import`, { method: 'POST', headers: { authorization: `Bearer ${server.pat}`, 'content-type': 'application/json' }, body });
      const result = (await res.json()) as any;
      expect(res.status, JSON.stringify(result).slice(0, 500)).toBe(200);
      expect(result.errors).toBeUndefined();
      expect(result.success.orgs[0].humanUserIds).toHaveLength(2000);
      const status = readFileSync(`/proc/${server.process.pid}/status`, 'utf8');
      const peakMiB = Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024;
      // The body itself is ~101 MiB; a full JSON.parse (string + object graph) would need several times that.
      expect(peakMiB).toBeLessThan(600);
    } finally {
      await server.close();
    }
  }, 120_000);
});
