import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { Agent, codeFlowTokens, createHuman, createWebApp, signIn, type WebApp } from './helpers/oidc.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';
import { totpAt } from '../src/crypto/totp.js';

/**
 * The lists the console reads (ListUsers, ListOrgs, ListMyProjectOrgs, ListProjects) and the auth
 * API about the caller (GetMyUser, ListMyMemberships, UpdateMyPassword, ListMyUserSessions, v2
 * DeleteSession), over real HTTP: filters, paging, who sees what, and refusals.
 */
let server: InProcessServer;
let orgId: string;
/** An app of the management project: a person's tokens from it may call the APIs (with the person's roles). */
let managementApp: WebApp;

beforeAll(async () => {
  server = await startInProcess();
  orgId = (await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: 'Lists Inc' } })).body.id;
  const management = server.app.ctx.instance.managementProjectId;
  managementApp = await createWebApp(server, { projectId: management, redirectUris: ['http://localhost:9999/callback'] });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const tokenOf = async (person: { loginName: string; password: string }) => (await codeFlowTokens(server, managementApp, person, 'openid')).access_token as string;

describe('lists', () => {
  it('ListUsers filters, sorts and pages the org’s users, and refuses a filter or sorting it does not know', async () => {
    for (const name of ['carol', 'alma', 'bert']) await createHuman(server, { userName: name, orgId });
    await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, orgId, body: { userName: 'robot', name: 'Robot' } });
    const list = (body: unknown) => api(server, 'POST', '/management/v1/users/_search', { token: server.pat, orgId, body });
    const names = (res: { body: { result?: { userName: string }[] } }) => (res.body.result ?? []).map((u) => u.userName);

    const all = await list({ query: { asc: true }, sortingColumn: 'USER_FIELD_NAME_USER_NAME' });
    expect(all.status).toBe(200);
    expect(names(all)).toEqual(['alma', 'bert', 'carol', 'robot']);
    expect(all.body.details.totalResult).toBe('4');
    expect(names(await list({ query: { asc: false }, sortingColumn: 'USER_FIELD_NAME_USER_NAME' }))).toEqual(['robot', 'carol', 'bert', 'alma']);
    expect(names(await list({ query: { offset: 1, limit: 2, asc: true }, sortingColumn: 'USER_FIELD_NAME_USER_NAME' }))).toEqual(['bert', 'carol']);
    expect(names(await list({ query: { asc: true }, queries: [{ typeQuery: { type: 'TYPE_MACHINE' } }] }))).toEqual(['robot']);
    expect(
      names(await list({ query: { asc: true }, sortingColumn: 'USER_FIELD_NAME_USER_NAME', queries: [{ userNameQuery: { userName: 'R', method: 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE' } }] })),
    ).toEqual(['bert', 'carol', 'robot']);
    expect(names(await list({ queries: [{ userNameQuery: { userName: 'alma' } }, { typeQuery: { type: 'TYPE_HUMAN' } }] }))).toEqual(['alma']);
    // Only the org's: the default org's users are not in Lists Inc.
    expect(names(all)).not.toContain('sesame-admin');

    for (const body of [
      { queries: [{ favouriteColourQuery: {} }] },
      { queries: [{ userNameQuery: { userName: 'a' }, typeQuery: { type: 'TYPE_HUMAN' } }] },
      { sortingColumn: 'USER_FIELD_NAME_NICK_NAME' },
      { query: { limit: 5000 } },
      // Not a column, whatever an object's prototype has; a misspelt field is no silent "everything".
      { sortingColumn: 'toString' },
      { querys: [{ typeQuery: { type: 'TYPE_MACHINE' } }] },
    ]) {
      const refused = await list(body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('ListOrgs is the instance administrators’; ListMyProjectOrgs answers each caller the orgs it may read and its own', async () => {
    const owner = await createHuman(server, { userName: 'lists-owner', orgId });
    await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, orgId, body: { userId: owner.userId, roles: ['ORG_OWNER'] } });
    const token = await tokenOf(owner);

    const all = await api(server, 'POST', '/admin/v1/orgs/_search', { token: server.pat, body: { sortingColumn: 'ORG_FIELD_NAME_NAME', query: { asc: true } } });
    expect(all.body.result.map((o: { name: string }) => o.name)).toEqual(['Lists Inc', 'Sesame']);
    expect((await api(server, 'POST', '/admin/v1/orgs/_search', { token, body: {} })).status).toBe(403);
    const mine = await api(server, 'POST', '/auth/v1/global/projectorgs/_search', { token, body: {} });
    expect(mine.body.result.map((o: { name: string }) => o.name)).toEqual(['Lists Inc']);
    const filtered = await api(server, 'POST', '/admin/v1/orgs/_search', {
      token: server.pat,
      body: { queries: [{ nameQuery: { name: 'lists', method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }] },
    });
    expect(filtered.body.result.map((o: { id: string }) => o.id)).toEqual([orgId]);
  });

  it('ListProjects answers the projects the caller may read in the org', async () => {
    const first = (await api(server, 'POST', '/management/v1/projects', { token: server.pat, orgId, body: { name: 'Alpha' } })).body.id;
    await api(server, 'POST', '/management/v1/projects', { token: server.pat, orgId, body: { name: 'Beta' } });
    const names = async (token: string, body: unknown = {}) =>
      ((await api(server, 'POST', '/management/v1/projects/_search', { token, orgId, body })).body.result ?? []).map((p: { name: string }) => p.name);
    expect(await names(server.pat, { query: { asc: true } })).toEqual(['Alpha', 'Beta']);
    expect(await names(server.pat, { queries: [{ nameQuery: { name: 'Be', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }] })).toEqual(['Beta']);
    // A person with no role reads none of them.
    const nobody = await createHuman(server, { userName: 'lists-nobody', orgId });
    expect(await names(await tokenOf(nobody))).toEqual([]);
    expect(first).toBeTruthy();
  });
});

describe('user grants', () => {
  it('ListUserGrants filters the org’s grants; RemoveUserGrant takes one away, and another org’s is not found', async () => {
    const project = (await api(server, 'POST', '/management/v1/projects', { token: server.pat, orgId, body: { name: 'Granted' } })).body.id;
    await api(server, 'POST', `/management/v1/projects/${project}/roles/_bulk`, { token: server.pat, orgId, body: { roles: [{ key: 'reader' }, { key: 'writer' }] } });
    const [ann, bob] = [await createHuman(server, { userName: 'grant-ann', orgId }), await createHuman(server, { userName: 'grant-bob', orgId })];
    const grant = async (userId: string, roleKeys: string[]) =>
      (await api(server, 'POST', `/management/v1/users/${userId}/grants`, { token: server.pat, orgId, body: { projectId: project, roleKeys } })).body.userGrantId as string;
    const annGrant = await grant(ann.userId, ['reader', 'writer']);
    await grant(bob.userId, ['reader']);
    const list = async (queries: unknown[]) =>
      ((await api(server, 'POST', '/management/v1/users/grants/_search', { token: server.pat, orgId, body: { query: { asc: true }, queries } })).body.result ?? []).map(
        (g: { userName: string }) => g.userName,
      );
    expect(await list([{ projectIdQuery: { projectId: project } }])).toEqual(['grant-ann', 'grant-bob']);
    expect(await list([{ projectIdQuery: { projectId: project } }, { roleKeyQuery: { roleKey: 'writer' } }])).toEqual(['grant-ann']);
    expect(await list([{ userIdQuery: { userId: bob.userId } }])).toEqual(['grant-bob']);
    expect((await api(server, 'POST', '/management/v1/users/grants/_search', { token: server.pat, orgId, body: { queries: [{ colourQuery: {} }] } })).status).toBe(400);

    // Another org's context does not find it.
    expect((await api(server, 'DELETE', `/management/v1/users/${ann.userId}/grants/${annGrant}`, { token: server.pat })).status).toBe(404);
    expect((await api(server, 'DELETE', `/management/v1/users/${bob.userId}/grants/${annGrant}`, { token: server.pat, orgId })).status).toBe(404);
    expect((await api(server, 'DELETE', `/management/v1/users/${ann.userId}/grants/${annGrant}`, { token: server.pat, orgId })).status).toBe(200);
    expect(await list([{ projectIdQuery: { projectId: project } }])).toEqual(['grant-bob']);
    expect((await api(server, 'GET', `/management/v1/users/${ann.userId}/grants/${annGrant}`, { token: server.pat, orgId })).status).toBe(404);
    // Granted again: the place the removed grant held is free.
    expect(await grant(ann.userId, ['reader'])).toBeTruthy();
    const events = await api(server, 'POST', '/admin/v1/events/_search', { token: server.pat, body: { aggregateId: annGrant, eventTypes: ['user.grant.removed'] } });
    expect(events.body.events).toHaveLength(1);
  });
});

describe('a person’s address and number', () => {
  it('UpdateHumanEmail, UpdateHumanPhone and RemoveHumanPhone change what the person signs in with', async () => {
    const person = await createHuman(server, { userName: 'moves-house', orgId });
    const path = `/management/v1/users/${person.userId}`;
    const as = (method: string, suffix: string, body?: unknown) => api(server, method, `${path}${suffix}`, { token: server.pat, orgId, body });
    const human = async () => (await as('GET', '')).body.user.human;
    const signsInAs = async (loginName: string) => {
      const authorize = `/oauth/v2/authorize?${new URLSearchParams({ client_id: managementApp.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope: 'openid' })}`;
      return (await signIn(new Agent(server), authorize, { loginName, password: person.password })).location?.startsWith('http://localhost:9999/callback?code=') === true;
    };

    // A verified address signs in; the old one no longer does.
    expect((await as('PUT', '/email', { email: 'moved@example.com', isEmailVerified: true })).status).toBe(200);
    expect((await human()).email).toEqual({ email: 'moved@example.com', isEmailVerified: true });
    expect(await signsInAs('moved@example.com')).toBe(true);
    // Not verified: no sign-in by it (the login name still works and asks for the code mailed there).
    expect((await as('PUT', '/email', { email: 'typo@example.com' })).status).toBe(200);
    expect((await human()).email).toEqual({ email: 'typo@example.com' });
    expect(await signsInAs('typo@example.com')).toBe(false);
    expect(await signsInAs('moved@example.com')).toBe(false);
    expect((await as('PUT', '/email', { email: 'not an address' })).status).toBe(400);

    expect((await as('PUT', '/phone', { phone: '+41 79 123 45 67', isPhoneVerified: true })).status).toBe(200);
    expect((await human()).phone).toEqual({ phone: '+41 79 123 45 67', isPhoneVerified: true });
    expect(await signsInAs('+41791234567')).toBe(true);
    expect((await as('PUT', '/phone', { phone: '' })).status).toBe(400);
    // Only a number the login can look up: `+` and 3 to 20 digits.
    for (const phone of ['+( )', '+41/79 123', '0791234567']) expect((await as('PUT', '/phone', { phone })).status, phone).toBe(400);
    expect((await as('DELETE', '/phone')).status).toBe(200);
    expect((await human()).phone?.phone).toBeUndefined();
    expect(await signsInAs('+41791234567')).toBe(false);
    expect((await as('DELETE', '/phone')).status).toBe(404);

    const events = await api(server, 'POST', '/admin/v1/events/_search', {
      token: server.pat,
      body: { aggregateId: person.userId, eventTypes: ['user.human.email.changed', 'user.human.phone.changed', 'user.human.phone.removed'] },
    });
    expect(events.body.events.map((e: { type: { type: string } }) => e.type.type).sort()).toEqual([
      'user.human.email.changed',
      'user.human.email.changed',
      'user.human.phone.changed',
      'user.human.phone.removed',
    ]);
    // A machine user has neither.
    const machine = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, orgId, body: { userName: 'no-mail', name: 'No mail' } });
    expect((await api(server, 'PUT', `/management/v1/users/${machine.body.userId}/email`, { token: server.pat, orgId, body: { email: 'x@example.com' } })).status).toBe(400);
  });
});

describe('the caller itself', () => {
  it('GetMyUser and ListMyMemberships answer who calls and what they administer', async () => {
    const me = await api(server, 'GET', '/auth/v1/users/me', { token: server.pat });
    expect(me.body.user.userName).toBe('admin');
    const memberships = await api(server, 'POST', '/auth/v1/memberships/me/_search', { token: server.pat, body: {} });
    expect(memberships.body.result).toEqual(
      expect.arrayContaining([expect.objectContaining({ iam: true, roles: ['IAM_OWNER'] }), expect.objectContaining({ roles: ['ORG_OWNER'], displayName: 'Sesame' })]),
    );
  });

  it('UpdateMyPassword checks the old password as the login does (counted, locking), then ends every session', async () => {
    await api(server, 'POST', '/management/v1/policies/lockout', { token: server.pat, orgId, body: { maxPasswordAttempts: 3 } });
    const person = await createHuman(server, { userName: 'changes-own', orgId });
    const token = await tokenOf(person);
    const change = (oldPassword: string, newPassword: string) => api(server, 'PUT', '/auth/v1/users/me/password', { token, body: { oldPassword, newPassword } });

    const wrong = await change('not-it', 'Brand-New-42!');
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toContain('old password is wrong');
    // A weak new password is refused after the old one passed; nothing changes.
    expect((await change(person.password, 'weak')).status).toBe(400);
    expect((await change(person.password, 'Brand-New-42!')).status).toBe(200);
    // The token died with the old password.
    expect((await api(server, 'GET', '/auth/v1/users/me', { token })).status).toBe(401);

    // Wrong old passwords count toward the lockout policy: the third locks the account.
    const again = await tokenOf({ loginName: person.loginName, password: 'Brand-New-42!' });
    for (let i = 0; i < 3; i++) expect((await api(server, 'PUT', '/auth/v1/users/me/password', { token: again, body: { oldPassword: `guess-${i}`, newPassword: 'Other-New-42!' } })).status).toBe(400);
    const locked = await api(server, 'GET', `/management/v1/users/${person.userId}`, { token: server.pat, orgId });
    expect(locked.body.user.state).toBe('USER_STATE_LOCKED');
  });

  it('ListMyUserSessions lists the person’s sessions; DeleteSession ends one of theirs, never another person’s', async () => {
    const person = await createHuman(server, { userName: 'two-browsers', orgId });
    const other = await createHuman(server, { userName: 'someone-else', orgId });
    const token = await tokenOf(person);
    const second = await tokenOf(person);
    const otherToken = await tokenOf(other);
    const sessions = await api(server, 'POST', '/auth/v1/users/me/sessions/_search', { token, body: {} });
    expect(sessions.body.result).toHaveLength(2);
    const [first] = sessions.body.result as { sessionId: string }[];

    // Another person cannot end it (nor learn it exists); an administrator can (below).
    expect((await api(server, 'DELETE', `/v2/sessions/${first!.sessionId}`, { token: otherToken })).status).toBe(404);
    expect((await api(server, 'DELETE', `/v2/sessions/${first!.sessionId}`, { token })).status).toBe(200);
    // One of the two tokens died with the session it came from; the other still reads the one left.
    const alive = (await api(server, 'GET', '/auth/v1/users/me', { token })).status === 200 ? token : second;
    const remaining = await api(server, 'POST', '/auth/v1/users/me/sessions/_search', { token: alive, body: {} });
    expect(remaining.body.result).toHaveLength(1);
    expect(remaining.body.result[0].sessionId).not.toBe(first!.sessionId);
    // A machine user has no sessions.
    expect((await api(server, 'POST', '/auth/v1/users/me/sessions/_search', { token: server.pat, body: {} })).status).toBe(400);
  });

  it('ListSessions lists a person’s sessions to whoever may read them; DeleteSession ends one for whoever may act on the person', async () => {
    const person = await createHuman(server, { userName: 'watched', orgId });
    const token = await tokenOf(person);
    await tokenOf(person);
    const search = (body: unknown, bearer = server.pat) => api(server, 'POST', '/v2/sessions/search', { token: bearer, orgId, body });
    const listed = await search({ queries: [{ userIdQuery: { id: person.userId } }] });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.details.totalResult).toBe('2');
    expect(listed.body.sessions[0].factors.user).toMatchObject({ id: person.userId, loginName: person.loginName, organizationId: orgId });
    expect((await search({ query: { limit: 1 }, queries: [{ userIdQuery: { id: person.userId } }] })).body.sessions).toHaveLength(1);
    // Per person only; a person elsewhere is not found.
    expect((await search({})).status).toBe(400);
    expect((await search({ queries: [{ userIdQuery: { id: '404' } }] })).status).toBe(404);

    // A user manager of the org ends the person's session: their token dies with it.
    const manager = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, orgId, body: { userName: 'session-manager', name: 'Session manager' } });
    await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, orgId, body: { userId: manager.body.userId, roles: ['ORG_USER_MANAGER'] } });
    const managerPat = (await api(server, 'POST', `/management/v1/users/${manager.body.userId}/pats`, { token: server.pat, orgId, body: {} })).body.token as string;
    const ids = (listed.body.sessions as { id: string }[]).map((s) => s.id);
    for (const id of ids) expect((await api(server, 'DELETE', `/v2/sessions/${id}`, { token: managerPat, orgId })).status).toBe(200);
    expect((await api(server, 'GET', '/auth/v1/users/me', { token })).status).toBe(401);
    expect((await search({ queries: [{ userIdQuery: { id: person.userId } }] })).body.sessions ?? []).toEqual([]);

    // Not an instance owner's: the manager may not act on them, so their sessions are not found.
    const owner = await createHuman(server, { userName: 'owner-in-org', orgId });
    await api(server, 'POST', '/admin/v1/members', { token: server.pat, body: { userId: owner.userId, roles: ['IAM_OWNER'] } });
    await tokenOf(owner);
    const ownerSessions = (await search({ queries: [{ userIdQuery: { id: owner.userId } }] })).body.sessions as { id: string }[];
    expect((await api(server, 'DELETE', `/v2/sessions/${ownerSessions[0]!.id}`, { token: managerPat, orgId })).status).toBe(404);
  });

  it('the person lists and removes their own factors and links (their sessions end with them); an administrator resets a TOTP', async () => {
    const idp = await api(server, 'POST', '/admin/v1/idps/generic_oidc', {
      token: server.pat,
      body: { name: 'Upstream', issuer: 'https://idp.example.com', clientId: 'sesame', clientSecret: 'shh', scopes: ['openid'], providerOptions: { isLinkingAllowed: true } },
    });
    expect(idp.status, JSON.stringify(idp.body)).toBe(200);
    const person = await createHuman(server, { userName: 'own-factors', orgId });
    const token = await tokenOf(person);
    // An administrator gave them codes by email and a linked account.
    expect((await api(server, 'POST', `/v2/users/${person.userId}/otp_email`, { token: server.pat, orgId, body: {} })).status).toBe(200);
    const linked = await api(server, 'POST', `/v2/users/${person.userId}/links`, { token: server.pat, orgId, body: { idpLink: { idpId: idp.body.id, userId: 'ext-1', userName: 'upstream-name' } } });
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);

    const factors = await api(server, 'POST', '/auth/v1/users/me/auth_factors/_search', { token, body: {} });
    expect(factors.body.result).toEqual([{ state: 'AUTH_FACTOR_STATE_READY', otpEmail: {} }]);
    const links = await api(server, 'POST', '/auth/v1/users/me/idps/_search', { token, body: {} });
    expect(links.body.result).toEqual([expect.objectContaining({ idpId: idp.body.id, idpName: 'Upstream', providedUserId: 'ext-1' })]);
    expect((await api(server, 'POST', '/auth/v1/users/me/passwordless/_search', { token, body: {} })).body.result ?? []).toEqual([]);
    // Nothing of theirs to remove: not found.
    expect((await api(server, 'DELETE', '/auth/v1/users/me/auth_factors/otp', { token })).status).toBe(404);
    expect((await api(server, 'DELETE', '/auth/v1/users/me/auth_factors/u2f/nope', { token })).status).toBe(404);

    expect((await api(server, 'DELETE', '/auth/v1/users/me/auth_factors/otp_email', { token })).status).toBe(200);
    // Removing ended their sessions, this token's too.
    expect((await api(server, 'POST', '/auth/v1/users/me/auth_factors/_search', { token, body: {} })).status).toBe(401);
    const again = await tokenOf(person);
    expect((await api(server, 'DELETE', `/auth/v1/users/me/linked/idps/${idp.body.id}/ext-1`, { token: again })).status).toBe(200);
    expect((await api(server, 'POST', `/management/v1/users/${person.userId}/auth_factors/_search`, { token: server.pat, orgId, body: {} })).body.result ?? []).toEqual([]);
    expect((await api(server, 'POST', `/management/v1/users/${person.userId}/idps/_search`, { token: server.pat, orgId, body: {} })).body.result ?? []).toEqual([]);

    // An administrator resets a TOTP (ZITADEL's RemoveHumanMultiFactorOTP), logged.
    const withOtp = await createHuman(server, { userName: 'has-totp', orgId, otpSecret: 'JBSWY3DPEHPK3PXP' });
    const list = () => api(server, 'POST', `/management/v1/users/${withOtp.userId}/auth_factors/_search`, { token: server.pat, orgId, body: {} });
    expect((await list()).body.result).toEqual([{ state: 'AUTH_FACTOR_STATE_READY', otp: {} }]);
    expect((await api(server, 'DELETE', `/management/v1/users/${withOtp.userId}/auth_factors/otp`, { token: server.pat, orgId })).status).toBe(200);
    expect((await list()).body.result ?? []).toEqual([]);
    const events = await api(server, 'POST', '/admin/v1/events/_search', { token: server.pat, body: { aggregateId: withOtp.userId, eventTypes: ['user.human.mfa.otp.removed'] } });
    expect(events.body.events).toHaveLength(1);
    // A machine user has no factors of its own to list.
    expect((await api(server, 'POST', '/auth/v1/users/me/auth_factors/_search', { token: server.pat, body: {} })).status).toBe(400);
  });

  it('a security key: AddMyAuthFactorU2F hands out creation options where the policy offers keys, VerifyMyAuthFactorU2F checks one answer against them; adding a factor takes a recent sign-in', async () => {
    const keys = (await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: 'Keys Inc' } })).body.id as string;
    const policy = (await api(server, 'GET', '/admin/v1/policies/login', { token: server.pat })).body.policy;
    const own = await api(server, 'POST', '/management/v1/policies/login', {
      token: server.pat,
      orgId: keys,
      body: { ...policy, secondFactors: ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_U2F'] },
    });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    const person = await createHuman(server, { userName: 'adds-a-key', orgId: keys });
    const token = await tokenOf(person);
    const add = (as = token) => api(server, 'POST', '/auth/v1/users/me/auth_factors/u2f', { token: as, body: {} });
    const verify = (publicKeyCredential: unknown) =>
      api(server, 'POST', '/auth/v1/users/me/auth_factors/u2f/_verify', { token, body: { verification: { publicKeyCredential, tokenName: 'Blue key' } } });

    expect((await verify({ id: 'x' })).body.message, 'nothing waits yet').toMatch(/no security key registration waits/);
    const started = await add();
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const options = JSON.parse(Buffer.from(started.body.key.publicKey, 'base64').toString('utf8'));
    expect(options).toMatchObject({ rp: { id: 'localhost' }, user: { name: person.loginName }, attestation: 'none', authenticatorSelection: { userVerification: 'discouraged' } });
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    // An answer that does not verify uses the challenge up: a second answer has nothing to be checked against.
    const forged = await verify({ id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: 'oA' } });
    expect(forged.status).toBe(400);
    expect(forged.body.message).toMatch(/does not verify/);
    expect((await verify({ id: 'AAAA' })).body.message).toMatch(/no security key registration waits/);
    expect((await api(server, 'POST', '/auth/v1/users/me/auth_factors/_search', { token, body: {} })).body.result ?? []).toEqual([]);

    // Six minutes after the sign-in, the same token adds no factor (it still reads).
    server.clock.advance(6 * 60_000);
    for (const path of ['/auth/v1/users/me/auth_factors/u2f', '/auth/v1/users/me/auth_factors/otp']) {
      const stale = await api(server, 'POST', path, { token, body: {} });
      expect(stale.status, path).toBe(400);
      expect(stale.body.message).toMatch(/sign in again first/);
    }
    expect((await api(server, 'GET', '/auth/v1/users/me', { token })).status).toBe(200);
    // Where the policy offers no security keys, none is started.
    const elsewhere = await createHuman(server, { userName: 'no-keys-here', orgId });
    const refused = await add(await tokenOf(elsewhere));
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/does not offer security keys/);
  });

  it('the person sets up TOTP: AddMyAuthFactorOTP hands out a key, VerifyMyAuthFactorOTP takes a code of the newest one', async () => {
    const person = await createHuman(server, { userName: 'sets-up-totp', orgId });
    const token = await tokenOf(person);
    // A code as the person's app shows it, on the server's clock (the test's).
    const codeOf = (secret: string) => totpAt(secret, Math.floor(server.clock.now() / 1000));
    const add = () => api(server, 'POST', '/auth/v1/users/me/auth_factors/otp', { token, body: {} });
    const verify = (code: string) => api(server, 'POST', '/auth/v1/users/me/auth_factors/otp/_verify', { token, body: { code } });

    expect((await verify('123456')).status, 'nothing waits yet').toBe(400);
    const first = await add();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.url).toMatch(new RegExp(`^otpauth://totp/.*secret=${first.body.secret}`));
    const wrong = codeOf(first.body.secret) === '000000' ? '111111' : '000000';
    const refused = await verify(wrong);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/code is wrong/);
    // A second key replaces the first: only its codes confirm.
    const second = await add();
    expect(second.body.secret).not.toBe(first.body.secret);
    if (codeOf(first.body.secret) !== codeOf(second.body.secret)) expect((await verify(codeOf(first.body.secret))).status).toBe(400);
    expect((await api(server, 'POST', '/auth/v1/users/me/auth_factors/_search', { token, body: {} })).body.result ?? []).toEqual([]);
    const confirmed = await verify(codeOf(second.body.secret));
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect((await api(server, 'POST', '/auth/v1/users/me/auth_factors/_search', { token, body: {} })).body.result).toEqual([{ state: 'AUTH_FACTOR_STATE_READY', otp: {} }]);
    expect((await add()).status, 'one TOTP a person').toBe(409);
    expect((await verify(codeOf(second.body.secret))).status, 'nothing waits any more').toBe(400);
    const events = await api(server, 'POST', '/admin/v1/events/_search', { token: server.pat, body: { aggregateId: person.userId, eventTypes: ['user.human.mfa.otp.added'] } });
    expect(events.body.events).toHaveLength(1);
    // The sign-in now asks for the app's code, and passes with it.
    const authorize = `/oauth/v2/authorize?${new URLSearchParams({ client_id: managementApp.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope: 'openid' })}`;
    expect((await signIn(new Agent(server), authorize, person)).html).toContain('action="/ui/login/otp"');
    // The code that confirmed the key is used up: it passes no sign-in.
    expect((await signIn(new Agent(server), authorize, person, () => codeOf(second.body.secret))).location).toBeUndefined();
    server.clock.advance(30_000);
    expect((await signIn(new Agent(server), authorize, person, () => codeOf(second.body.secret))).location).toMatch(/^http:\/\/localhost:9999\/callback\?code=/);

    // An org whose login policy does not offer TOTP hands out no key.
    const other = (await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: 'No TOTP Inc' } })).body.id as string;
    // The default policy as the org's own, less TOTP.
    const { policy } = (await api(server, 'GET', '/management/v1/policies/login', { token: server.pat, orgId: other })).body;
    const { isDefault: _isDefault, details: _details, ...own } = policy;
    const added = await api(server, 'POST', '/management/v1/policies/login', { token: server.pat, orgId: other, body: { ...own, secondFactors: [] } });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const noTotp = await createHuman(server, { userName: 'no-totp', orgId: other });
    const refusedByPolicy = await api(server, 'POST', '/auth/v1/users/me/auth_factors/otp', { token: await tokenOf(noTotp), body: {} });
    expect(refusedByPolicy.status).toBe(400);
    expect(refusedByPolicy.body.message).toMatch(/does not offer TOTP/);
  });
});
