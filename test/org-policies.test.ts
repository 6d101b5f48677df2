import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, importOrgs } from './helpers/api.js';
import { Agent, createWebApp, submit, uniqueName, type WebApp } from './helpers/oidc.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * The org policies besides login and lockout (password complexity, privacy, label, domain,
 * notification): the management API for an org's own, the admin API for the instance default,
 * what is refused, what each enforces, and the import and export of the ones a bundle carries.
 */
let server: InProcessServer;
let web: WebApp;
const REDIRECT = 'http://localhost:9999/callback';

async function newOrg(): Promise<string> {
  const res = await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: uniqueName('org') } });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

const call = (method: string, path: string, body?: unknown, orgId?: string) => api(server, method, path, { token: server.pat, body, orgId });

function addPerson(orgId: string, password: string, userName = uniqueName('p')) {
  return call(
    'POST',
    '/management/v1/users/human',
    { userName, profile: { firstName: 'A', lastName: 'B' }, email: { email: `${userName}@example.com`, isEmailVerified: true }, initialPassword: password },
    orgId,
  );
}

beforeAll(async () => {
  server = await startInProcess();
  web = await createWebApp(server);
});

afterAll(async () => {
  await server?.close();
});

describe('policy API', () => {
  it('answers each policy for an org, with the default until the org has its own, and back to it after DELETE', async () => {
    const orgId = await newOrg();
    for (const [path, field] of [
      ['password/complexity', 'minLength'],
      ['privacy', undefined],
      ['label', undefined],
      ['domain', 'userLoginMustBeDomain'],
      ['notification', 'passwordChange'],
    ] as const) {
      const res = await call('GET', `/management/v1/policies/${path}`, undefined, orgId);
      expect(res.status, path).toBe(200);
      expect(res.body.policy.isDefault, path).toBe(true);
      if (field) expect(res.body.policy[field], path).toBeTruthy();
    }
    const added = await call('POST', '/management/v1/policies/password/complexity', { minLength: '12', hasNumber: true }, orgId);
    expect(added.status).toBe(200);
    expect(added.body.details.resourceOwner).toBe(orgId);
    expect((await call('POST', '/management/v1/policies/password/complexity', { minLength: '12' }, orgId)).status).toBe(409);
    const own = await call('GET', '/management/v1/policies/password/complexity', undefined, orgId);
    expect(own.body.policy).toMatchObject({ minLength: '12', hasNumber: true });
    expect(own.body.policy.isDefault).toBeUndefined();
    expect(own.body.policy.hasSymbol).toBeUndefined();
    expect((await call('PUT', '/management/v1/policies/password/complexity', { minLength: '10' }, orgId)).status).toBe(200);
    expect((await call('GET', '/management/v1/policies/password/complexity', undefined, orgId)).body.policy.minLength).toBe('10');
    expect((await call('DELETE', '/management/v1/policies/password/complexity', undefined, orgId)).status).toBe(200);
    expect((await call('GET', '/management/v1/policies/password/complexity', undefined, orgId)).body.policy).toMatchObject({ minLength: '8', isDefault: true });
  });

  it('refuses what could reach a page: links that are not http(s), colours that are not hex colours', async () => {
    const orgId = await newOrg();
    const privacy = await call('POST', '/management/v1/policies/privacy', { tosLink: 'javascript:alert(1)' }, orgId);
    expect(privacy.status).toBe(400);
    expect(privacy.body.message).toContain('tosLink');
    const label = await call('POST', '/management/v1/policies/label', { primaryColor: 'red;}body{display:none' }, orgId);
    expect(label.status).toBe(400);
    expect(label.body.message).toContain('primaryColor');
    expect((await call('POST', '/management/v1/policies/privacy', { supportEmail: 'not an address' }, orgId)).status).toBe(400);
  });

  it('edits the label policy as a preview, in force once activated', async () => {
    const orgId = await newOrg();
    expect((await call('POST', '/management/v1/policies/label', { primaryColor: '#112233', hideLoginNameSuffix: true }, orgId)).status).toBe(200);
    const preview = await call('GET', '/management/v1/policies/label/_preview', undefined, orgId);
    expect(preview.body.policy).toMatchObject({ primaryColor: '#112233', hideLoginNameSuffix: true });
    expect(preview.body.policy.isDefault).toBeUndefined();
    // Not yet in force.
    expect((await call('GET', '/management/v1/policies/label', undefined, orgId)).body.policy.isDefault).toBe(true);
    expect((await call('POST', '/management/v1/policies/label/_activate', {}, orgId)).status).toBe(200);
    expect((await call('GET', '/management/v1/policies/label', undefined, orgId)).body.policy).toMatchObject({ primaryColor: '#112233' });
    expect((await call('DELETE', '/management/v1/policies/label', undefined, orgId)).status).toBe(200);
    expect((await call('GET', '/management/v1/policies/label', undefined, orgId)).body.policy.isDefault).toBe(true);
    expect((await call('POST', '/management/v1/policies/label/_activate', {}, orgId)).status).toBe(404);
  });

  it('sets the instance default through the admin API: orgs without their own follow it', async () => {
    const orgId = await newOrg();
    const before = await call('GET', '/admin/v1/policies/password/complexity');
    expect(before.status).toBe(200);
    expect(before.body.policy).toMatchObject({ minLength: '8', isDefault: true });
    try {
      expect((await call('PUT', '/admin/v1/policies/password/complexity', { minLength: '9', hasUppercase: true })).status).toBe(200);
      expect((await call('GET', '/management/v1/policies/password/complexity', undefined, orgId)).body.policy).toMatchObject({ minLength: '9', hasUppercase: true, isDefault: true });
      const refused = await addPerson(orgId, 'lowercase-only-1');
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain('an uppercase letter');
    } finally {
      await call('PUT', '/admin/v1/policies/password/complexity', { minLength: '8' });
    }
  });

  it('leaves the instance default to instance roles', async () => {
    const orgId = await newOrg();
    const owner = await call('POST', '/management/v1/users/machine', { userName: uniqueName('owner'), name: 'Owner' }, orgId);
    expect(owner.status).toBe(200);
    expect((await call('POST', '/management/v1/orgs/me/members', { userId: owner.body.userId, roles: ['ORG_OWNER'] }, orgId)).status).toBe(200);
    const pat = await call('POST', `/management/v1/users/${owner.body.userId}/pats`, {}, orgId);
    expect(pat.status).toBe(200);
    const asOrgOwner = (method: string, path: string, body?: unknown) => api(server, method, path, { token: pat.body.token, body, orgId });
    expect((await asOrgOwner('PUT', '/admin/v1/policies/password/complexity', { minLength: '1' })).status).toBe(403);
    expect((await asOrgOwner('POST', '/management/v1/policies/password/complexity', { minLength: '10' })).status).toBe(200);
  });
});

describe('password complexity', () => {
  it('is enforced where an administrator sets a password, naming the rule', async () => {
    const orgId = await newOrg();
    expect((await call('POST', '/management/v1/policies/password/complexity', { minLength: '10', hasSymbol: true, hasNumber: true }, orgId)).status).toBe(200);
    const short = await addPerson(orgId, 'Short-1');
    expect(short.status).toBe(400);
    expect(short.body.message).toContain('at least 10 characters');
    const noSymbol = await addPerson(orgId, 'NoSymbolHere1');
    expect(noSymbol.body.message).toContain('a symbol');
    const good = await addPerson(orgId, 'Has-Symbol-1');
    expect(good.status).toBe(200);
    const set = await call('POST', `/management/v1/users/${good.body.userId}/password`, { password: 'nonumbers-here' }, orgId);
    expect(set.status).toBe(400);
    expect(set.body.message).toContain('a number');
    expect((await call('POST', `/management/v1/users/${good.body.userId}/password`, { password: 'numbers-here-42' }, orgId)).status).toBe(200);
    const imported = await call(
      'POST',
      '/management/v1/users/human/_import',
      { userName: uniqueName('i'), profile: { firstName: 'A', lastName: 'B' }, email: { email: 'i@example.com' }, password: 'short' },
      orgId,
    );
    expect(imported.status).toBe(400);
  });

  it('is enforced at registration and on a required change, in the page language', async () => {
    const orgId = await newOrg();
    expect((await call('POST', '/management/v1/policies/password/complexity', { minLength: '12', hasUppercase: true }, orgId)).status).toBe(200);
    const agent = new Agent(server);
    const query = new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: `openid urn:zitadel:iam:org:id:${orgId}`, ui_locales: 'de', prompt: 'create' });
    let page = await agent.follow(`/oauth/v2/authorize?${query}`);
    const fields = { firstName: 'R', lastName: 'S', email: 'r@example.com', userName: uniqueName('r') };
    page = await submit(agent, page, '/ui/login/register', { ...fields, password: 'short', passwordConfirm: 'short' });
    expect(page.html).toContain('mindestens 12 Zeichen');
    page = await submit(agent, page, '/ui/login/register', { ...fields, password: 'long-enough-lowercase', passwordConfirm: 'long-enough-lowercase' });
    expect(page.html).toContain('Großbuchstaben');
    page = await submit(agent, page, '/ui/login/register', { ...fields, password: 'Long-Enough-Upper', passwordConfirm: 'Long-Enough-Upper' });
    expect(page.location).toContain(REDIRECT);
  });

  it("is enforced on an import: a plain password that breaks the bundle's rule is reported, the person left out", async () => {
    const orgId = uniqueName('cx');
    const human = (id: string, password: string) => ({ userId: id, user: { userName: id, profile: { firstName: 'A', lastName: 'B' }, email: { email: `${id}@example.com` }, password } });
    const res = await importOrgs(server, [
      { orgId, org: { name: orgId }, passwordComplexityPolicy: { minLength: '10', hasNumber: true }, humanUsers: [human(`${orgId}-weak`, 'no-number-here'), human(`${orgId}-ok`, 'number-1-here')] },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.success.orgs[0].humanUserIds).toEqual([`${orgId}-ok`]);
    const error = res.body.errors.find((e: any) => e.id === `${orgId}-weak`);
    expect(error.type).toBe('human_user');
    expect(error.message).toContain('a number');
  });
});

describe('domain policy', () => {
  it('userLoginMustBeDomain off: the user name is the login name, unique in the instance', async () => {
    const orgA = await newOrg();
    const orgB = await newOrg();
    for (const org of [orgA, orgB]) expect((await call('POST', '/management/v1/policies/domain', { userLoginMustBeDomain: false }, org)).status).toBe(200);
    const name = uniqueName('solo');
    const created = await addPerson(orgA, 'Password-123', name);
    expect(created.status).toBe(200);
    const user = await call('GET', `/management/v1/users/${created.body.userId}`, undefined, orgA);
    expect(user.body.user.preferredLoginName).toBe(name);
    expect(user.body.user.loginNames).toEqual([name]);
    const again = await addPerson(orgB, 'Password-123', name.toUpperCase());
    expect(again.status).toBe(409);
    // An org with domain login names may still have the same user name: its login name differs.
    expect((await addPerson(await newOrg(), 'Password-123', name)).status).toBe(200);
    // Signs in with the bare name.
    const agent = new Agent(server);
    let page = await agent.follow(`/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' })}`);
    page = await submit(agent, page, '/ui/login/loginname', { loginName: name });
    page = await submit(agent, page, '/ui/login/password', { password: 'Password-123' });
    expect(page.location).toContain(REDIRECT);
  });

  it('refuses to change whether login names carry the domain once the org has users', async () => {
    const orgId = await newOrg();
    expect((await addPerson(orgId, 'Password-123')).status).toBe(200);
    const res = await call('POST', '/management/v1/policies/domain', { userLoginMustBeDomain: false, validateOrgDomains: true }, orgId);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('userLoginMustBeDomain');
    // The other fields may still change.
    expect((await call('POST', '/management/v1/policies/domain', { userLoginMustBeDomain: true, validateOrgDomains: false }, orgId)).status).toBe(200);
  });
});

describe('the login pages follow the label and privacy policies', () => {
  it('links, terms accepted at registration, colours, the login name without its domain, no watermark', async () => {
    const orgId = await newOrg();
    const scope = `openid urn:zitadel:iam:org:id:${orgId}`;
    expect(
      (
        await call(
          'POST',
          '/management/v1/policies/privacy',
          { tosLink: 'https://example.com/tos', privacyLink: 'https://example.com/privacy', supportEmail: 'help@example.com', customLink: 'https://example.com/status', customLinkText: 'Status' },
          orgId,
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await call(
          'POST',
          '/management/v1/policies/label',
          { primaryColor: '#aa0000', primaryColorDark: '#ff5555', hideLoginNameSuffix: true, disableWatermark: true, themeMode: 'THEME_MODE_DARK' },
          orgId,
        )
      ).status,
    ).toBe(200);
    expect((await call('POST', '/management/v1/policies/label/_activate', {}, orgId)).status).toBe(200);
    const agent = new Agent(server);
    const query = (extra: Record<string, string> = {}) => new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope, ...extra });
    let page = await agent.follow(`/oauth/v2/authorize?${query()}`);
    expect(page.html).toContain('href="https://example.com/tos"');
    expect(page.html).toContain('href="mailto:help@example.com"');
    expect(page.html).toContain('>Status</a>');
    expect(page.html).not.toContain('Secured by Sesame');
    const stylesheet = /<link rel="stylesheet" href="(\/ui\/login\/resources\/label\/[^"]+)">/.exec(page.html!)?.[1]?.replaceAll('&amp;', '&');
    expect(stylesheet).toContain(orgId);
    const css = await agent.fetch(stylesheet!);
    expect(css.headers.get('content-type')).toContain('text/css');
    const text = await css.text();
    expect(text).toContain('color-scheme: dark');
    expect(text).toContain('#ff5555');
    // The chip shows the name without the org's domain.
    const person = await addPerson(orgId, 'Password-123', 'chip-person');
    expect(person.status).toBe(200);
    const loginName = (await call('GET', `/management/v1/users/${person.body.userId}`, undefined, orgId)).body.user.preferredLoginName as string;
    page = await submit(agent, page, '/ui/login/loginname', { loginName });
    expect(page.html).toContain('<span class="user-chip">chip-person</span>');
    // Registration asks for the terms, and refuses without them.
    const reg = new Agent(server);
    page = await reg.follow(`/oauth/v2/authorize?${query({ prompt: 'create' })}`);
    expect(page.html).toContain('name="acceptTerms"');
    const fields = { firstName: 'T', lastName: 'C', email: 'tc@example.com', userName: uniqueName('tc'), password: 'Accept-Terms-1', passwordConfirm: 'Accept-Terms-1' };
    const refused = await submit(reg, page, '/ui/login/register', fields);
    expect(refused.html).toContain('Accept the terms of service');
    const accepted = await submit(reg, refused, '/ui/login/register', { ...fields, acceptTerms: 'yes' });
    expect(accepted.location).toContain(REDIRECT);
  });

  it("a project that enforces its org's branding shows it without an org scope", async () => {
    const orgId = await newOrg();
    expect((await call('POST', '/management/v1/policies/label', { disableWatermark: true }, orgId)).status).toBe(200);
    expect((await call('POST', '/management/v1/policies/label/_activate', {}, orgId)).status).toBe(200);
    const project = await call('POST', '/management/v1/projects', { name: uniqueName('branded'), privateLabelingSetting: 'PRIVATE_LABELING_SETTING_ENFORCE_PROJECT_RESOURCE_OWNER_POLICY' }, orgId);
    expect(project.status).toBe(200);
    const app = await call(
      'POST',
      `/management/v1/projects/${project.body.id}/apps/oidc`,
      {
        name: 'branded',
        redirectUris: [REDIRECT],
        responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
        grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
        appType: 'OIDC_APP_TYPE_WEB',
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
        devMode: true,
      },
      orgId,
    );
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    const page = await new Agent(server).follow(`/oauth/v2/authorize?${new URLSearchParams({ client_id: app.body.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' })}`);
    expect(page.html).toContain('action="/ui/login/loginname"');
    expect(page.html).not.toContain('Secured by Sesame');
    // The default app's login still has Sesame's look.
    const plain = await new Agent(server).follow(`/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' })}`);
    expect(plain.html).toContain('Secured by Sesame');
  });
});

describe('label policy images and font (the assets API)', () => {
  const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('a tiny png for the test')]);
  const WOFF2 = Buffer.concat([Buffer.from('wOF2'), Buffer.alloc(64, 7)]);
  const upload = (path: string, bytes: Buffer, orgId: string, name = 'logo.png') => {
    const form = new FormData();
    form.append('file', new Blob([bytes]), name);
    return fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${server.pat}`, 'x-zitadel-orgid': orgId }, body: form });
  };

  it('uploads a logo and a font to the preview, keeps them through a change of the fields, shows them once activated', async () => {
    const orgId = await newOrg();
    const up = await upload('/assets/v1/org/policy/label/logo', PNG, orgId);
    expect(up.status, await up.clone().text()).toBe(200);
    expect((await upload('/assets/v1/org/policy/label/font', WOFF2, orgId, 'org.woff2')).status).toBe(200);
    // Told by its bytes: an SVG (or anything else) is refused, whatever it is called.
    const svg = await upload('/assets/v1/org/policy/label/icon', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), orgId, 'icon.png');
    expect(svg.status).toBe(400);
    expect((await upload('/assets/v1/org/policy/label/font', PNG, orgId)).status).toBe(400);
    expect((await upload('/assets/v1/org/policy/label/icon', PNG, orgId, 'icon.png')).status).toBe(200);
    // A raw body works too (curl --data-binary).
    const raw = await fetch(`${server.url}/assets/v1/org/policy/label/logo/dark`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.pat}`, 'x-zitadel-orgid': orgId, 'content-type': 'image/png' },
      body: PNG,
    });
    expect(raw.status).toBe(200);
    const back = await fetch(`${server.url}/assets/v1/org/policy/label/logo`, { headers: { authorization: `Bearer ${server.pat}`, 'x-zitadel-orgid': orgId } });
    expect(back.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await back.arrayBuffer())).toEqual(PNG);
    // Changing the colours keeps the images.
    expect((await call('PUT', '/management/v1/policies/label', { primaryColor: '#123456' }, orgId)).status).toBe(200);
    const preview = (await call('GET', '/management/v1/policies/label/_preview', undefined, orgId)).body.policy;
    expect(preview.logoUrl).toMatch(/^\/ui\/login\/resources\/asset\/[0-9a-f]{64}$/);
    expect(preview.fontUrl).toBeTruthy();
    expect((await call('GET', '/management/v1/policies/label', undefined, orgId)).body.policy.logoUrl).toBeUndefined();
    expect((await call('POST', '/management/v1/policies/label/_activate', {}, orgId)).status).toBe(200);
    const page = await new Agent(server).follow(
      `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: `openid urn:zitadel:iam:org:id:${orgId}` })}`,
    );
    expect(page.html).toContain(`<img src="${preview.logoUrl}"`);
    expect(page.html).toContain('media="(prefers-color-scheme: dark)"');
    expect(page.html).toContain(`<link rel="icon" href="${preview.iconUrl}">`);
    const served = await fetch(`${server.url}${preview.logoUrl}`);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('cache-control')).toContain('immutable');
    const css = await (await fetch(`${server.url}${/<link rel="stylesheet" href="(\/ui\/login\/resources\/label\/[^"]+)">/.exec(page.html!)![1]!.replaceAll('&amp;', '&')}`)).text();
    expect(css).toContain(`url("${preview.fontUrl}")`);
    // Removed from the preview; the one in force stays until activated again.
    expect((await call('DELETE', '/management/v1/policies/label/logo', undefined, orgId)).status).toBe(200);
    expect((await call('GET', '/management/v1/policies/label/_preview', undefined, orgId)).body.policy.logoUrl).toBeUndefined();
    expect((await call('GET', '/management/v1/policies/label', undefined, orgId)).body.policy.logoUrl).toBe(preview.logoUrl);
    // A file nobody stored is not found.
    expect((await fetch(`${server.url}/ui/login/resources/asset/${'0'.repeat(64)}`)).status).toBe(404);
  });
});

describe('import and export', () => {
  it('carries every policy of a bundle both ways', async () => {
    const orgId = uniqueName('pol');
    const policies: Record<string, unknown> = {
      domainPolicy: { userLoginMustBeDomain: false, validateOrgDomains: true, smtpSenderAddressMatchesInstanceDomain: true },
      labelPolicy: {
        primaryColor: '#5469d4',
        backgroundColor: '#fafafa',
        warnColor: '#cd3d56',
        fontColor: '#000000',
        primaryColorDark: '#2073c4',
        backgroundColorDark: '#111827',
        warnColorDark: '#ff3b5b',
        fontColorDark: '#ffffff',
        hideLoginNameSuffix: true,
        disableWatermark: true,
        themeMode: 'THEME_MODE_DARK',
      },
      lockoutPolicy: { maxPasswordAttempts: 5, showLockoutFailure: true },
      passwordComplexityPolicy: { minLength: '11', hasUppercase: true, hasLowercase: true, hasNumber: true, hasSymbol: true },
      privacyPolicy: {
        tosLink: 'https://example.com/tos',
        privacyLink: 'https://example.com/privacy',
        helpLink: 'https://example.com/help',
        supportEmail: 'support@example.com',
        docsLink: 'https://example.com/docs',
        customLink: 'https://example.com/x',
        customLinkText: 'More',
      },
    };
    const message = (language: string, subject: string) => ({
      language,
      title: 'T',
      preHeader: 'P',
      subject,
      greeting: 'Hi {{.FirstName}}',
      text: 'Code {{.Code}}',
      buttonText: 'Go',
      footerText: 'F',
    });
    const messages = {
      initMessages: [message('de', 'Willkommen'), message('en', 'Welcome')],
      passwordResetMessages: [message('en', 'Reset')],
      verifyEmailMessages: [message('en', 'Verify')],
      verifyPhoneMessages: [message('en', 'Phone')],
      domainClaimedMessages: [message('en', 'Claimed')],
      passwordlessRegistrationMessages: [message('en', 'Passkey')],
      inviteUserMessages: [message('en', 'Invite')],
      verifyEmailOtpMessages: [message('en', 'OTP')],
      verifySmsOtpMessages: [{ language: 'en', text: 'SMS {{.OTP}}' }],
    };
    Object.assign(policies, messages);
    const res = await importOrgs(server, [
      { orgId, org: { name: orgId }, ...policies, humanUsers: [{ userId: `${orgId}-u`, user: { userName: 'plain', profile: { firstName: 'A', lastName: 'B' }, email: { email: 'p@example.com' } } }] },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.errors ?? []).toEqual([]);
    const exported = await api(server, 'POST', '/admin/v1/export', { token: server.pat, body: { orgIds: [orgId], timeout: '1m' } });
    expect(exported.status).toBe(200);
    const org = exported.body.orgs[0];
    // Exported as protojson: false values omitted.
    const withoutFalse = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== false));
    for (const [field, value] of Object.entries(policies)) expect(org[field], field).toEqual(Array.isArray(value) ? value : withoutFalse(value as object));
    // The imported texts are the org's: the API reads them.
    const init = await call('GET', '/management/v1/text/message/init/de', undefined, orgId);
    expect(init.body.customText).toMatchObject({ subject: 'Willkommen', greeting: 'Hi {{.FirstName}}' });
    // The bundle's domain policy governed its users: a user name alone is the login name.
    const user = await call('GET', `/management/v1/users/${orgId}-u`, undefined, orgId);
    expect(user.body.user.preferredLoginName).toBe('plain');
  });
});
