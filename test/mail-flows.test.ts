import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { Agent, codeFlowTokens, createWebApp, exchangeCode, formOf, submit, uniqueName, type Step, type WebApp } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { startSmtpReceiver, type SmtpReceiver } from './helpers/smtp-receiver.js';

/**
 * What people get by mail, read from a real SMTP receiver, and the login pages that take it: a
 * password reset from the login (and through the API), an email verification step for an
 * unverified address (registration included), the initialization of a person made without a
 * password; codes single use, in the person's language, bounded per person.
 */
let server: InProcessServer;
let receiver: SmtpReceiver;
let web: WebApp;
const clock = new TestClock();
const REDIRECT = 'http://localhost:9999/callback';

const call = (method: string, path: string, body?: unknown, orgId?: string) => api(server, method, path, { token: server.pat, body, orgId });
const authorizeUrl = (params: Record<string, string> = {}) =>
  `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid email', state: 's', ...params })}`;
const errorText = (html: string | undefined) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html ?? '')?.[1];
const infoText = (html: string | undefined) => /<p class="info" role="status">([^<]*)<\/p>/.exec(html ?? '')?.[1];
/** The link of a mail that leads to a login page (path relative to the server). */
const linkOf = (links: string[], path: string) => {
  const link = links.find((l) => new URL(l).pathname === path);
  if (!link) throw new Error(`no link to ${path} in ${links.join(', ')}`);
  const url = new URL(link);
  return { path: url.pathname + url.search, code: url.searchParams.get('code')!, params: url.searchParams };
};

async function newPerson(options: { verified?: boolean; password?: string | null; language?: string; orgId?: string } = {}) {
  const userName = uniqueName('mp');
  const email = `${userName}@example.com`;
  const res = await call(
    'POST',
    '/management/v1/users/human/_import',
    {
      userName,
      profile: { firstName: 'Mia', lastName: 'Post', preferredLanguage: options.language ?? 'en' },
      email: { email, isEmailVerified: options.verified ?? true },
      ...(options.password === null ? {} : { password: options.password ?? 'Old-Password-1' }),
    },
    options.orgId,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const user = await call('GET', `/management/v1/users/${res.body.userId}`, undefined, options.orgId);
  return { userId: res.body.userId as string, email, loginName: user.body.user.preferredLoginName as string, password: options.password ?? 'Old-Password-1' };
}

async function toPassword(agent: Agent, loginName: string, params: Record<string, string> = {}): Promise<Step> {
  const first = await agent.follow(authorizeUrl(params));
  return submit(agent, first, '/ui/login/loginname', { loginName });
}

beforeAll(async () => {
  receiver = await startSmtpReceiver();
  server = await startInProcess({ clock });
  web = await createWebApp(server);
  const config = await call('POST', '/admin/v1/smtp', { senderAddress: 'login@example.com', senderName: 'Sesame Login', host: receiver.host });
  expect(config.status).toBe(200);
  expect((await call('POST', `/admin/v1/smtp/${config.body.id}/_activate`, {})).status).toBe(200);
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

describe('password reset', () => {
  it('from the login: a code by mail, the complexity policy, the old sessions end, and a mail that the password changed', async () => {
    const person = await newPerson();
    // A session signed in with the old password, in another browser.
    const other = new Agent(server);
    let page = await toPassword(other, person.loginName);
    page = await submit(other, page, '/ui/login/password', { password: person.password });
    expect(page.location).toContain(REDIRECT);

    const agent = new Agent(server);
    page = await toPassword(agent, person.loginName);
    expect(page.html).toContain('Forgot your password?');
    page = await submit(agent, page, '/ui/login/password/reset', {});
    expect(page.html).toContain('action="/ui/login/password/init"');
    const mail = await receiver.next(person.email);
    expect(mail.subject).toBe('Reset password');
    expect(mail.from).toBe('login@example.com');
    expect(mail.language).toBe('en');
    const link = linkOf(mail.links, '/ui/login/password/init');
    expect(link.code).toMatch(/^[A-Z0-9]{6}$/);
    expect(link.params.get('userID')).toBe(person.userId);
    expect(mail.text).toContain(link.code);
    // The link opens the step in this browser's sign-in, the code filled in.
    page = await agent.follow(link.path);
    expect(page.html).toContain(`value="${link.code}"`);
    const weak = await submit(agent, page, '/ui/login/password/init', { code: link.code, password: 'short', passwordConfirm: 'short' });
    expect(errorText(weak.html)).toContain('at least 8 characters');
    const wrong = await submit(agent, page, '/ui/login/password/init', { code: 'ZZZZZZ', password: 'New-Password-2', passwordConfirm: 'New-Password-2' });
    expect(errorText(wrong.html)).toContain('wrong or has expired');
    page = await submit(agent, page, '/ui/login/password/init', { code: link.code, password: 'New-Password-2', passwordConfirm: 'New-Password-2' });
    expect(infoText(page.html)).toContain('Sign in with it');
    expect(page.html).toContain('action="/ui/login/password"');
    // The code was used: once only.
    const again = await new Agent(server).follow(link.path);
    const reused = await submit(new Agent(server), again, '/ui/login/password/init', { code: link.code, password: 'Other-Password-3', passwordConfirm: 'Other-Password-3' });
    expect(errorText(reused.html)).toContain('wrong or has expired');
    // The old password is gone, the new one signs in.
    page = await submit(agent, page, '/ui/login/password', { password: 'New-Password-2' });
    expect(page.location).toContain(REDIRECT);
    expect((await exchangeCode(server, web, page.location!, REDIRECT)).status).toBe(200);
    // The session of the other browser ended: it must sign in again.
    const resumed = await other.follow(authorizeUrl());
    expect(resumed.location).toBeUndefined();
    // The notification policy's passwordChange: the person is told.
    const changed = await receiver.next(person.email);
    expect(changed.subject).toBe('Password of user has changed');
  });

  it('answers the same for a login name nobody has, and mails nothing', async () => {
    const agent = new Agent(server);
    const before = receiver.mails.length;
    let page = await toPassword(agent, `${uniqueName('nobody')}@example.com`);
    page = await submit(agent, page, '/ui/login/password/reset', {});
    expect(page.html).toContain('action="/ui/login/password/init"');
    const tried = await submit(agent, page, '/ui/login/password/init', { code: 'ABCDEF', password: 'New-Password-2', passwordConfirm: 'New-Password-2' });
    expect(errorText(tried.html)).toContain('wrong or has expired');
    await server.app.tick();
    expect(receiver.mails.length).toBe(before);
  });

  it('hidePasswordReset: no link, and no reset from the login', async () => {
    const org = await call('POST', '/management/v1/orgs', { name: uniqueName('hide') });
    expect((await call('POST', '/management/v1/policies/login', { allowUsernamePassword: true, hidePasswordReset: true }, org.body.id)).status).toBe(200);
    const person = await newPerson({ orgId: org.body.id });
    const agent = new Agent(server);
    const page = await toPassword(agent, person.loginName);
    expect(page.html).toContain('action="/ui/login/password"');
    expect(page.html).not.toContain('/ui/login/password/reset');
    const forced = await agent.follow('/ui/login/password/reset', { form: formOf(page.html!, '/ui/login/password').fields });
    expect(forced.html).not.toContain('action="/ui/login/password/init"');
  });

  it("through the API, in the person's language, opened in another browser", async () => {
    const person = await newPerson({ language: 'de' });
    expect((await call('POST', `/management/v1/users/${person.userId}/password/_reset`, { type: 'NOTIFICATION_TYPE_Email' })).status).toBe(200);
    const mail = await receiver.next(person.email);
    expect(mail.language).toBe('de');
    expect(mail.subject).toBe('Passwort zurücksetzen');
    const link = linkOf(mail.links, '/ui/login/password/init');
    expect(link.params.get('authRequestID')).toBeNull();
    const agent = new Agent(server);
    const page = await agent.follow(link.path);
    const done = await submit(agent, page, '/ui/login/password/init', { code: link.code, password: 'Neues-Passwort-3', passwordConfirm: 'Neues-Passwort-3' });
    expect(done.html).toContain('<h1>Password set</h1>');
    const fresh = new Agent(server);
    const ok = await submit(fresh, await toPassword(fresh, person.loginName), '/ui/login/password', { password: 'Neues-Passwort-3' });
    expect(ok.location).toContain(REDIRECT);
    expect((await call('POST', `/management/v1/users/${person.userId}/password/_reset`, { type: 'NOTIFICATION_TYPE_Sms' })).status).toBe(400);
  });
});

describe('user v2 recovery', () => {
  it('a code mailed to the old address dies when an administrator changes the address (UpdateHumanEmail)', async () => {
    const person = await newPerson();
    const code = (await call('POST', `/v2/users/${person.userId}/password_reset`, { returnCode: {} })).body.verificationCode as string;
    expect(code).toMatch(/^[A-Z0-9]{6}$/);
    expect((await call('PUT', `/management/v1/users/${person.userId}/email`, { email: `moved-${person.email}`, isEmailVerified: true })).status).toBe(200);
    const refused = await call('POST', `/v2/users/${person.userId}/password`, { newPassword: { password: 'Old-Mailbox-Code-1' }, verificationCode: code });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    // The same address again (another letter case) voids nothing: a new code works.
    const fresh = (await call('POST', `/v2/users/${person.userId}/password_reset`, { returnCode: {} })).body.verificationCode as string;
    expect((await call('PUT', `/management/v1/users/${person.userId}/email`, { email: `MOVED-${person.email}`, isEmailVerified: true })).status).toBe(200);
    expect((await call('POST', `/v2/users/${person.userId}/password`, { newPassword: { password: 'New-Mailbox-Code-2' }, verificationCode: fresh })).status).toBe(200);
  });

  it("returns a reset code to the caller, or mails the caller's link; the code sets the password once", async () => {
    const person = await newPerson();
    const returned = await call('POST', `/v2/users/${person.userId}/password_reset`, { returnCode: {} });
    expect(returned.status, JSON.stringify(returned.body)).toBe(200);
    expect(returned.body.verificationCode).toMatch(/^[A-Z0-9]{6}$/);
    await server.app.tick();
    expect(receiver.mails.filter((m) => m.to === person.email)).toEqual([]);
    const set = await call('POST', `/v2/users/${person.userId}/password`, { newPassword: { password: 'Via-Code-Set-1' }, verificationCode: returned.body.verificationCode });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await call('POST', `/v2/users/${person.userId}/password`, { newPassword: { password: 'Again-Code-Set-2' }, verificationCode: returned.body.verificationCode })).status).toBe(400);
    const agent = new Agent(server);
    expect((await submit(agent, await toPassword(agent, person.loginName), '/ui/login/password', { password: 'Via-Code-Set-1' })).location).toContain(REDIRECT);
    // The caller's own page in the mail.
    const linked = await call('POST', `/v2/users/${person.userId}/password_reset`, {
      sendLink: { notificationType: 'NOTIFICATION_TYPE_Email', urlTemplate: 'https://app.example.com/reset?user={{.UserID}}&code={{.Code}}&org={{.OrgID}}' },
    });
    expect(linked.status).toBe(200);
    // The new password's notice and the reset mail, in either order.
    const two = [await receiver.next(person.email), await receiver.next(person.email)];
    expect(two.map((m) => m.subject).sort()).toEqual(['Password of user has changed', 'Reset password']);
    const mail = two.find((m) => m.subject === 'Reset password')!;
    const link = mail.links.find((l) => l.startsWith('https://app.example.com/reset'))!;
    expect(new URL(link).searchParams.get('user')).toBe(person.userId);
    expect(new URL(link).searchParams.get('code')).toMatch(/^[A-Z0-9]{6}$/);
    expect((await call('POST', `/v2/users/${person.userId}/password_reset`, { sendLink: { urlTemplate: 'javascript:alert({{.Code}})' } })).status).toBe(400);
  });

  it('verifies an address with a code returned to the caller', async () => {
    const person = await newPerson({ verified: false });
    await receiver.next(person.email);
    const returned = await call('POST', `/v2/users/${person.userId}/email/resend`, { returnCode: {} });
    expect(returned.status).toBe(200);
    expect((await call('POST', `/v2/users/${person.userId}/email/verify`, { verificationCode: 'WRONG1' })).status).toBe(400);
    // The wrong try counted, the code still stands (void after five).
    expect((await call('POST', `/v2/users/${person.userId}/email/verify`, { verificationCode: returned.body.verificationCode })).status).toBe(200);
    expect((await call('GET', `/management/v1/users/${person.userId}`)).body.user.human.email.isEmailVerified).toBe(true);
  });
});

describe('email verification', () => {
  it('stops a sign-in with an unverified address until the mailed code comes back', async () => {
    const person = await newPerson({ verified: false });
    // ZITADEL's import mails a verification code to an unverified address.
    const welcome = await receiver.next(person.email);
    expect(welcome.subject).toBe('Verify email');
    const code = linkOf(welcome.links, '/ui/login/mail/verification').code;
    const agent = new Agent(server);
    let page = await toPassword(agent, person.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    expect(page.location).toBeUndefined();
    expect(page.html).toContain('action="/ui/login/mail/verification"');
    expect(page.html).toContain('m•••@example.com');
    const wrong = await submit(agent, page, '/ui/login/mail/verification', { code: 'AAAAAA' });
    expect(errorText(wrong.html)).toBeTruthy();
    page = await submit(agent, page, '/ui/login/mail/verification', { code: code.toLowerCase() });
    expect(page.location).toContain(REDIRECT);
    expect((await exchangeCode(server, web, page.location!, REDIRECT)).status).toBe(200);
    const user = await call('GET', `/management/v1/users/${person.userId}`);
    expect(user.body.user.human.email.isEmailVerified).toBe(true);
  });

  it('verifies a new registration, with a new code on request', async () => {
    const agent = new Agent(server);
    let page = await agent.follow(authorizeUrl({ prompt: 'create' }));
    const userName = uniqueName('reg');
    page = await submit(agent, page, '/ui/login/register', {
      firstName: 'Rea',
      lastName: 'Gist',
      email: `${userName}@example.com`,
      userName,
      password: 'Register-Me-1',
      passwordConfirm: 'Register-Me-1',
    });
    expect(page.html).toContain('action="/ui/login/mail/verification"');
    const first = await receiver.next(`${userName}@example.com`);
    page = await submit(agent, page, '/ui/login/mail/verification/resend', {});
    expect(infoText(page.html)).toContain('new code');
    const second = await receiver.next(`${userName}@example.com`);
    const oldCode = linkOf(first.links, '/ui/login/mail/verification').code;
    const newCode = linkOf(second.links, '/ui/login/mail/verification').code;
    // The last code sent is the one that counts.
    if (oldCode !== newCode) expect(errorText((await submit(agent, page, '/ui/login/mail/verification', { code: oldCode })).html)).toBeTruthy();
    page = await submit(agent, page, '/ui/login/mail/verification', { code: newCode });
    expect(page.location).toContain(REDIRECT);
  });

  it('bounds the codes mailed to one person: the sixth within an hour is refused', async () => {
    const person = await newPerson({ verified: false });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call('POST', `/management/v1/users/${person.userId}/email/_resend_verification`, {})).status);
    // One went out at the import already.
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    clock.advance(3_600_001);
    expect((await call('POST', `/management/v1/users/${person.userId}/email/_resend_verification`, {})).status).toBe(200);
  });
});

describe('message texts', () => {
  it("an org's own texts, the instance's in another language, escaped, and back to the default", async () => {
    const org = await call('POST', '/management/v1/orgs', { name: uniqueName('texts') });
    const orgId = org.body.id as string;
    const set = await call(
      'PUT',
      '/management/v1/text/message/passwordreset/en',
      { subject: 'Acme: reset for {{.UserName}}', text: 'Your code is {{.Code}} <script>alert(1)</script><br>Bye {{.Unknown}}' },
      orgId,
    );
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const read = await call('GET', '/management/v1/text/message/passwordreset/en', undefined, orgId);
    expect(read.body.customText).toMatchObject({ subject: 'Acme: reset for {{.UserName}}', title: 'Reset password' });
    expect(read.body.customText.isDefault).toBeUndefined();
    const person = await newPerson({ orgId });
    expect((await call('POST', `/management/v1/users/${person.userId}/password/_reset`, { type: 'NOTIFICATION_TYPE_Email' }, orgId)).status).toBe(200);
    const mail = await receiver.next(person.email);
    expect(mail.subject).toBe(`Acme: reset for ${person.loginName.split('@')[0]}`);
    const code = linkOf(mail.links, '/ui/login/password/init').code;
    expect(mail.html).toContain(`Your code is ${code} &lt;script&gt;alert(1)&lt;/script&gt;<br>`);
    expect(mail.html).not.toContain('<script>');
    // An unknown placeholder is left empty.
    expect(mail.text).toMatch(/Bye\n/);
    // The instance's text in a language Sesame has none in.
    expect((await call('PUT', '/admin/v1/text/message/verifyemail/fr', { subject: 'Vérifiez votre adresse', text: 'Code {{.Code}}' })).status).toBe(200);
    const french = await newPerson({ verified: false, language: 'fr' });
    const welcome = await receiver.next(french.email);
    expect(welcome.subject).toBe('Vérifiez votre adresse');
    expect(welcome.language).toBe('fr');
    // Back to the default.
    expect((await call('DELETE', '/management/v1/text/message/passwordreset/en', undefined, orgId)).status).toBe(200);
    expect((await call('GET', '/management/v1/text/message/passwordreset/en', undefined, orgId)).body.customText).toMatchObject({ subject: 'Reset password', isDefault: true });
    expect((await call('GET', '/management/v1/text/default/message/verifyemail/fr', undefined, orgId)).body.customText.subject).toBe('Vérifiez votre adresse');
    expect((await call('GET', '/admin/v1/text/default/message/init/de')).body.customText.subject).toBe('Benutzer initialisieren');
    expect((await call('GET', '/management/v1/text/message/nosuchtype/en', undefined, orgId)).status).toBe(404);
    expect((await call('PUT', '/management/v1/text/message/init/not a tag', {}, orgId)).status).toBe(400);
  });
});

describe('message texts are bounded', () => {
  it('keeps texts in at most 40 languages per message type', async () => {
    const org = await call('POST', '/management/v1/orgs', { name: uniqueName('langs') });
    const tag = (i: number) => `x${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}`;
    for (let i = 0; i < 40; i++) expect((await call('PUT', `/management/v1/text/message/init/${tag(i)}`, { subject: `S${i}` }, org.body.id)).status).toBe(200);
    const refused = await call('PUT', `/management/v1/text/message/init/${tag(40)}`, { subject: 'one too many' }, org.body.id);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('40 languages');
    // A language it has may still change; another message type has its own 40.
    expect((await call('PUT', `/management/v1/text/message/init/${tag(0)}`, { subject: 'changed' }, org.body.id)).status).toBe(200);
    expect((await call('PUT', `/management/v1/text/message/passwordreset/${tag(40)}`, { subject: 'other type' }, org.body.id)).status).toBe(200);
  });
});

describe('codes by email as a second factor', () => {
  async function orgWith(login: Record<string, unknown>, lockout?: Record<string, unknown>) {
    const org = await call('POST', '/management/v1/orgs', { name: uniqueName('otpmail') });
    expect((await call('POST', '/management/v1/policies/login', { allowUsernamePassword: true, ...login }, org.body.id)).status).toBe(200);
    if (lockout) expect((await call('POST', '/management/v1/policies/lockout', lockout, org.body.id)).status).toBe(200);
    return org.body.id as string;
  }
  const otpOf = (mail: { text: string }) => /\b(\d{8})\b/.exec(mail.text)![1]!;

  it('forceMfa with email codes only: enrolled at the login, then a code per sign-in', async () => {
    const orgId = await orgWith({ forceMfa: true, secondFactors: ['SECOND_FACTOR_TYPE_OTP_EMAIL'] });
    const person = await newPerson({ orgId });
    const agent = new Agent(server);
    let page = await toPassword(agent, person.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    expect(page.html).toContain('action="/ui/login/mfa/email"');
    expect(page.html).not.toContain('action="/ui/login/mfa/verify"');
    page = await submit(agent, page, '/ui/login/mfa/email', {});
    expect(page.html).toContain('action="/ui/login/otp/email"');
    const mail = await receiver.next(person.email);
    expect(mail.subject).toBe('Verify One-Time Password');
    const wrong = await submit(agent, page, '/ui/login/otp/email', { code: '00000000' });
    expect(errorText(wrong.html)).toBeTruthy();
    page = await submit(agent, page, '/ui/login/otp/email', { code: otpOf(mail) });
    expect(page.location).toContain(REDIRECT);
    const { claims } = await exchangeCode(server, web, page.location!, REDIRECT);
    expect(claims.amr).toEqual(expect.arrayContaining(['pwd', 'mfa']));
    // The next sign-in asks for a new code, and the old one is used up.
    const again = new Agent(server);
    page = await toPassword(again, person.loginName);
    page = await submit(again, page, '/ui/login/password', { password: person.password });
    expect(page.html).toContain('action="/ui/login/otp/email"');
    const second = await receiver.next(person.email);
    expect(errorText((await submit(again, page, '/ui/login/otp/email', { code: otpOf(mail) })).html)).toBeTruthy();
    page = await submit(again, page, '/ui/login/otp/email', { code: otpOf(second) });
    expect(page.location).toContain(REDIRECT);
    // A right code takes back the attempt counted for it: a dozen sign-ins in a row (beyond the ten
    // attempts per quarter hour the TOTP step allows) all pass.
    for (let i = 0; i < 12; i++) {
      const agent = new Agent(server);
      let step = await toPassword(agent, person.loginName);
      step = await submit(agent, step, '/ui/login/password', { password: person.password });
      step = await submit(agent, step, '/ui/login/otp/email', { code: otpOf(await receiver.next(person.email)) });
      expect(step.location, `sign-in ${i + 3}`).toContain(REDIRECT);
    }
  });

  it('wrong codes count against maxOtpAttempts', async () => {
    const orgId = await orgWith({ secondFactors: ['SECOND_FACTOR_TYPE_OTP_EMAIL'] }, { maxPasswordAttempts: '0', maxOtpAttempts: '2', showLockoutFailure: true });
    const person = await newPerson({ orgId });
    expect((await call('POST', `/v2/users/${person.userId}/otp_email`, {}, orgId)).status).toBe(200);
    const agent = new Agent(server);
    let page = await toPassword(agent, person.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    expect(page.html).toContain('action="/ui/login/otp/email"');
    await receiver.next(person.email);
    page = await submit(agent, page, '/ui/login/otp/email', { code: '11111111' });
    const locked = await submit(agent, page, '/ui/login/otp/email', { code: '22222222' });
    expect(locked.html).toContain('locked');
    expect((await call('GET', `/management/v1/users/${person.userId}`, undefined, orgId)).body.user.state).toBe('USER_STATE_LOCKED');
  });

  it('is refused for an unverified address, and removed through the API', async () => {
    const person = await newPerson({ verified: false });
    await receiver.next(person.email);
    expect((await call('POST', `/v2/users/${person.userId}/otp_email`, {})).status).toBe(400);
    const verified = await newPerson();
    expect((await call('POST', `/v2/users/${verified.userId}/otp_email`, {})).status).toBe(200);
    expect((await call('POST', `/v2/users/${verified.userId}/otp_email`, {})).status).toBe(409);
    expect((await call('DELETE', `/management/v1/users/${verified.userId}/auth_factors/otp_email`)).status).toBe(200);
    expect((await call('DELETE', `/v2/users/${verified.userId}/otp_email`)).status).toBe(404);
  });
});

describe('initialization', () => {
  it('a person made without a password sets one with the mailed code, which also verifies the address', async () => {
    const person = await newPerson({ password: null, verified: false });
    const mail = await receiver.next(person.email);
    expect(mail.subject).toBe('Initialize User');
    expect(mail.text).toContain(person.loginName);
    const link = linkOf(mail.links, '/ui/login/user/init');
    expect(link.params.get('passwordset')).toBe('false');
    const agent = new Agent(server);
    const page = await agent.follow(link.path);
    const done = await submit(agent, page, '/ui/login/user/init', { code: link.code, password: 'First-Password-1', passwordConfirm: 'First-Password-1' });
    expect(done.html).toContain('<h1>Account ready</h1>');
    const user = await call('GET', `/management/v1/users/${person.userId}`);
    expect(user.body.user.state).toBe('USER_STATE_ACTIVE');
    expect(user.body.user.human.email.isEmailVerified).toBe(true);
    const fresh = new Agent(server);
    const signedIn = await submit(fresh, await toPassword(fresh, person.loginName), '/ui/login/password', { password: 'First-Password-1' });
    expect(signedIn.location).toContain(REDIRECT);
  });

  it('at the login: an initial person who types their name gets the step, and a code', async () => {
    const person = await newPerson({ password: null });
    await receiver.next(person.email);
    const agent = new Agent(server);
    let page = await toPassword(agent, person.loginName);
    expect(page.html).toContain('action="/ui/login/user/init"');
    page = await submit(agent, page, '/ui/login/user/init/resend', {});
    const code = linkOf((await receiver.next(person.email)).links, '/ui/login/user/init').code;
    page = await submit(agent, page, '/ui/login/user/init', { code, password: 'First-Password-2', passwordConfirm: 'First-Password-2' });
    expect(infoText(page.html)).toContain('Sign in with your new password');
    page = await submit(agent, page, '/ui/login/password', { password: 'First-Password-2' });
    expect(page.location).toContain(REDIRECT);
  });
});

describe('passkey registration links', () => {
  it("a bundle's person with requestPasswordlessRegistration is mailed a link to register a passkey; _send_link mails one too", async () => {
    const orgId = uniqueName('pl');
    const userName = uniqueName('pl');
    const imported = await call('POST', '/admin/v1/import', {
      timeout: '1m',
      dataOrgs: {
        orgs: [
          {
            orgId,
            org: { name: uniqueName('pl-org') },
            loginPolicy: { allowUsernamePassword: true, passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' },
            humanUsers: [
              {
                userId: `${orgId}-u`,
                user: { userName, profile: { firstName: 'Pia', lastName: 'Key' }, email: { email: `${userName}@example.com`, isEmailVerified: true }, requestPasswordlessRegistration: true },
              },
            ],
          },
        ],
      },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body.errors).toBeUndefined();
    const mail = await receiver.next(`${userName}@example.com`);
    expect(mail.subject).toBe('Add Passwordless Login');
    const link = linkOf(mail.links, '/ui/login/passwordless/init');
    const page = await new Agent(server).follow(link.path);
    expect(page.status).toBe(200);
    expect(page.html).toContain('id="webauthn-options"');
    // A code that is not the link's opens nothing.
    const wrong = await new Agent(server).follow(link.path.replace(link.code, 'WRONGCODE123'));
    expect(wrong.status).toBe(400);
    expect((await call('POST', `/management/v1/users/${orgId}-u/passwordless/_send_link`, {}, orgId)).status).toBe(200);
    expect((await receiver.next(`${userName}@example.com`)).subject).toBe('Add Passwordless Login');
  });
});

describe("a person's own address and number (SetMyEmail, SetMyPhone, RemoveMyPhone)", () => {
  const me = (token: string, method: string, path: string, body?: unknown) => api(server, method, `/auth/v1/users/me${path}`, { token, body });

  it('take a sign-in of the last 5 minutes; the new address gets a code, and the codes mailed to the old one die', async () => {
    const management = await createWebApp(server, { projectId: server.app.ctx.instance.managementProjectId, redirectUris: [REDIRECT] });
    const person = await newPerson();
    // A reset mailed to the old address, before the change.
    expect((await call('POST', `/management/v1/users/${person.userId}/password/_reset`, { type: 'NOTIFICATION_TYPE_Email' })).status).toBe(200);
    const oldCode = linkOf((await receiver.next(person.email)).links, '/ui/login/password/init').code;

    const signedIn = async () => (await codeFlowTokens(server, management, person, 'openid')).access_token as string;
    const stale = await signedIn();
    clock.advance(5 * 60_000 + 1000);
    const newEmail = `${uniqueName('moved')}@example.com`;
    for (const [method, path, body] of [
      ['PUT', '/email', { email: newEmail }],
      ['PUT', '/phone', { phone: '+41 79 123 45 67' }],
      ['DELETE', '/phone', undefined],
    ] as const) {
      const refused = await me(stale, method, path, body);
      expect(refused.status, path).toBe(400);
      expect(refused.body.message).toMatch(/sign in again first/);
    }
    // The token still works for everything else.
    expect((await me(stale, 'GET', '')).body.user.human.email.email).toBe(person.email);

    const fresh = await signedIn();
    expect((await me(fresh, 'PUT', '/email', { email: newEmail, isEmailVerified: true })).status).toBe(400);
    expect((await me(fresh, 'PUT', '/email', { email: 'not an address' })).status).toBe(400);
    expect((await me(fresh, 'PUT', '/email', { email: newEmail })).status).toBe(200);
    const after = (await me(fresh, 'GET', '')).body.user.human.email;
    expect(after.email).toBe(newEmail);
    expect(after.isEmailVerified ?? false).toBe(false);
    // Whoever reads the old mailbox cannot set the password with what was mailed there.
    const reset = await call('POST', `/v2/users/${person.userId}/password`, { newPassword: { password: 'Taken-Over-9' }, verificationCode: oldCode });
    expect(reset.status).toBe(400);
    // The new address got a code: a wrong one is refused, the right one verifies it.
    const code = linkOf((await receiver.next(newEmail)).links, '/ui/login/mail/verification').code;
    expect((await me(fresh, 'POST', '/email/_verify', { code: 'AAAAAA' })).status).toBe(400);
    expect((await me(fresh, 'POST', '/email/_verify', { code })).status).toBe(200);
    expect((await me(fresh, 'GET', '')).body.user.human.email.isEmailVerified).toBe(true);
    expect((await me(fresh, 'POST', '/email/_resend_verification')).status).toBe(400);
    // Saving the address one has (the console's form holds it) changes nothing: it stays verified.
    const same = await me(fresh, 'PUT', '/email', { email: newEmail.toUpperCase() });
    expect(same.status).toBe(400);
    expect(same.body.message).toMatch(/the one you have/);
    expect((await me(fresh, 'GET', '')).body.user.human.email.isEmailVerified).toBe(true);

    // A number the person sets is unverified (Sesame sends no SMS); removed, then there is none to remove.
    expect((await me(fresh, 'PUT', '/phone', { phone: '+41 79 123 45 67', isPhoneVerified: true })).status).toBe(400);
    expect((await me(fresh, 'PUT', '/phone', { phone: '' })).status).toBe(400);
    expect((await me(fresh, 'PUT', '/phone', { phone: '+41 79 123 45 67' })).status).toBe(200);
    const phone = (await me(fresh, 'GET', '')).body.user.human.phone;
    expect(phone.phone).toBe('+41 79 123 45 67');
    expect(phone.isPhoneVerified ?? false).toBe(false);
    expect((await me(fresh, 'PUT', '/phone', { phone: '+41791234567' })).body.message).toMatch(/the one you have/);
    expect((await me(fresh, 'DELETE', '/phone')).status).toBe(200);
    expect((await me(fresh, 'DELETE', '/phone')).status).toBe(404);
    // The activity log has the changes, by the person.
    const events = await call('POST', '/admin/v1/events/_search', { aggregateTypes: ['user'], editorUserId: person.userId });
    const types = (events.body.events ?? []).map((e: { type: { type: string } }) => e.type.type);
    expect(types).toEqual(expect.arrayContaining(['user.human.email.changed', 'user.human.email.verified', 'user.human.phone.changed', 'user.human.phone.removed']));
  });

  it('are refused to a machine user, which has neither', async () => {
    const machine = (await call('POST', '/management/v1/users/machine', { userName: uniqueName('svc'), name: 'Service' })).body.userId;
    const pat = (await call('POST', `/management/v1/users/${machine}/pats`, {})).body.token;
    const refused = await me(pat, 'PUT', '/email', { email: 'svc@example.com' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/only people/);
  });
});
