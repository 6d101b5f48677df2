import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api } from './helpers/api.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { startSmtpReceiver, type SmtpReceiver } from './helpers/smtp-receiver.js';
import { storedBytes } from './helpers/stored.js';

/**
 * The SMTP configuration API (ZITADEL admin v1) against real SMTP receivers: a relay without
 * credentials, one with STARTTLS and a login, one with implicit TLS; the synchronous test call and
 * its errors; the durable outbox, its retries and its view.
 */
let server: InProcessServer;
let plain: SmtpReceiver;
let starttls: SmtpReceiver;
let implicit: SmtpReceiver;
let caDir: string;
const clock = new TestClock();

const call = (method: string, path: string, body?: unknown) => api(server, method, path, { token: server.pat, body });
const sender = { senderAddress: 'noreply@example.com', senderName: 'Sesame', tls: false };

beforeAll(async () => {
  [plain, starttls, implicit] = await Promise.all([
    startSmtpReceiver(),
    startSmtpReceiver({ tls: 'starttls', auth: { user: 'relay-user', pass: 'relay-secret-1' } }),
    startSmtpReceiver({ tls: 'implicit' }),
  ]);
  caDir = mkdtempSync(join(tmpdir(), 'sesame-ca-'));
  writeFileSync(join(caDir, 'ca.pem'), `${starttls.ca}\n${implicit.ca}`);
  server = await startInProcess({ clock, env: { SESAME_SMTP_TLS_CA_FILE: join(caDir, 'ca.pem') } });
});

afterAll(async () => {
  await server?.close();
  await Promise.all([plain, starttls, implicit].map((r) => r?.close()));
  rmSync(caDir, { recursive: true, force: true });
});

describe('SMTP configuration', () => {
  it('adds, lists, reads, activates one at a time, tests, and never gives the password back', async () => {
    const first = await call('POST', '/admin/v1/smtp', { ...sender, host: plain.host, description: 'plain relay' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const second = await call('POST', '/admin/v1/smtp', { ...sender, host: starttls.host, tls: true, user: 'relay-user', password: 'relay-secret-1', description: 'starttls' });
    expect(second.status).toBe(200);
    const list = await call('POST', '/admin/v1/smtp/_search', {});
    expect(list.body.result.map((c: any) => c.description)).toEqual(expect.arrayContaining(['plain relay', 'starttls']));
    expect(JSON.stringify(list.body)).not.toContain('relay-secret-1');
    expect((await call('GET', '/admin/v1/smtp')).status).toBe(404);
    expect((await call('POST', `/admin/v1/smtp/${first.body.id}/_activate`, {})).status).toBe(200);
    expect((await call('GET', '/admin/v1/smtp')).body.smtpConfig).toMatchObject({ id: first.body.id, state: 'SMTP_CONFIG_ACTIVE', host: plain.host });
    expect((await call('POST', `/admin/v1/smtp/${second.body.id}/_activate`, {})).status).toBe(200);
    const byId = await call('GET', `/admin/v1/smtp/${first.body.id}`);
    expect(byId.body.smtpConfig.state).toBe('SMTP_CONFIG_INACTIVE');
    expect(byId.body.smtpConfig.password).toBeUndefined();
    // The password is sealed at rest.
    expect((await storedBytes(server.dataDir)).includes(Buffer.from('relay-secret-1'))).toBe(false);

    // The test call sends at once and answers with the relay's word.
    const tested = await call('POST', `/admin/v1/smtp/${second.body.id}/_test`, { receiverAddress: 'ops@example.com' });
    expect(tested.status, JSON.stringify(tested.body)).toBe(200);
    const mail = await starttls.next('ops@example.com');
    expect(mail.subject).toContain('SMTP test');
    expect(starttls.logins).toContain('relay-user');
    expect(starttls.secureSessions.at(-1)).toBe(true);

    // A wrong password: the relay's refusal is the message.
    expect((await call('PUT', `/admin/v1/smtp/${second.body.id}/password`, { password: 'wrong' })).status).toBe(200);
    const refused = await call('POST', `/admin/v1/smtp/${second.body.id}/_test`, { receiverAddress: 'ops@example.com' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/could not be sent: .*(auth|535)/i);
    expect((await call('POST', `/admin/v1/smtp/${second.body.id}/_deactivate`, {})).status).toBe(200);
    expect((await call('POST', `/admin/v1/smtp/${second.body.id}/_deactivate`, {})).status).toBe(400);
    expect((await call('DELETE', `/admin/v1/smtp/${second.body.id}`)).status).toBe(200);
    expect((await call('GET', `/admin/v1/smtp/${second.body.id}`)).status).toBe(404);
  });

  it('tests unsaved settings: implicit TLS, a relay without credentials, and one that is not there', async () => {
    const implicitTest = await call('POST', '/admin/v1/smtp/_test', { ...sender, host: implicit.host, tls: true, receiverAddress: 'tls@example.com' });
    expect(implicitTest.status, JSON.stringify(implicitTest.body)).toBe(200);
    await implicit.next('tls@example.com');
    expect(implicit.secureSessions.at(-1)).toBe(true);
    const plainTest = await call('POST', '/admin/v1/smtp/_test', { ...sender, host: plain.host, receiverAddress: 'plain@example.com' });
    expect(plainTest.status).toBe(200);
    expect((await plain.next('plain@example.com')).from).toBe('noreply@example.com');
    // TLS asked of a relay that has none: refused, not sent in the clear.
    const noTls = await call('POST', '/admin/v1/smtp/_test', { ...sender, host: plain.host, tls: true, receiverAddress: 'x@example.com' });
    expect(noTls.status).toBe(400);
    const closed = await call('POST', '/admin/v1/smtp/_test', { ...sender, host: '127.0.0.1:1', receiverAddress: 'x@example.com' });
    expect(closed.status).toBe(400);
    expect(closed.body.message).toMatch(/ECONNREFUSED/);
  });

  it('refuses bad settings, and the API to anyone but an instance administrator', async () => {
    expect((await call('POST', '/admin/v1/smtp', { ...sender, senderAddress: 'not-an-address', host: plain.host })).status).toBe(400);
    expect((await call('POST', '/admin/v1/smtp', { ...sender, host: 'bad host:25' })).status).toBe(400);
    expect((await api(server, 'POST', '/admin/v1/smtp/_search', { body: {} })).status).toBe(401);
  });

  it('asks the sender to be on the instance domain when the default domain policy says so', async () => {
    try {
      expect((await call('PUT', '/admin/v1/policies/domain', { userLoginMustBeDomain: true, validateOrgDomains: true, smtpSenderAddressMatchesInstanceDomain: true })).status).toBe(200);
      const refused = await call('POST', '/admin/v1/smtp', { ...sender, host: plain.host });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain('smtpSenderAddressMatchesInstanceDomain');
    } finally {
      await call('PUT', '/admin/v1/policies/domain', { userLoginMustBeDomain: true, validateOrgDomains: true, smtpSenderAddressMatchesInstanceDomain: false });
    }
  });
});

describe('the mail outbox', () => {
  it('keeps a mail the relay refuses, retries it with backoff, lists it, and sends it once the relay takes mail', async () => {
    const added = await call('POST', '/admin/v1/smtp', { ...sender, host: plain.host });
    expect((await call('POST', `/admin/v1/smtp/${added.body.id}/_activate`, {})).status).toBe(200);
    const user = await call('POST', '/management/v1/users/human', { userName: 'outbox-person', profile: { firstName: 'O', lastName: 'B' }, email: { email: 'outbox@example.com' } });
    expect(user.status).toBe(200);
    plain.refuse = true;
    expect((await call('POST', `/management/v1/users/${user.body.userId}/email/_resend_verification`, {})).status).toBe(200);
    await server.app.tick();
    const listed = await call('POST', '/admin/v1/mails/_search', {});
    const row = listed.body.result.find((m: any) => m.recipient === 'outbox@example.com' && m.kind === 'VerifyEmail');
    expect(row).toMatchObject({ state: 'MAIL_STATE_QUEUED', attempts: 1 });
    expect(row.lastError).toMatch(/451/);
    plain.refuse = false;
    clock.advance(31_000);
    await server.app.tick();
    const mail = await plain.next('outbox@example.com');
    expect(mail.subject).toBeTruthy();
    const after = await call('POST', '/admin/v1/mails/_search', {});
    expect(after.body.result?.find((m: any) => m.id === row.id)).toBeUndefined();
  });
});
