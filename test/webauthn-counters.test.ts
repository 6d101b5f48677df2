import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { createHuman } from './helpers/oidc.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * A passkey's signature counter is decided on the person as stored: an answer whose counter is not
 * ahead of the stored one (a cloned authenticator, or one answer replayed on two threads) is
 * refused; authenticators that keep no counter (always 0) pass; a removed key passes nothing.
 * The ceremonies themselves are exercised in Chromium (test/browser-passkeys.test.ts).
 */
let server: InProcessServer;

beforeAll(async () => {
  server = await startInProcess();
});

afterAll(async () => {
  await server?.close();
});

describe('WebAuthn signature counters', () => {
  it('moves only forward, once per value, two answers at once included', async () => {
    const person = await createHuman(server);
    const orgs = server.app.ctx.orgs;
    const token = { id: 'cred-1', tokenId: 't-1', publicKey: new Uint8Array([1, 2, 3]), counter: 5, name: 'Key', kind: 'u2f' as const, createdAt: Date.now() };
    expect(await orgs.addWebAuthnToken(person.userId, token)).toBeDefined();
    await expect(orgs.addWebAuthnToken(person.userId, { ...token, tokenId: 't-2' })).rejects.toThrow(/already registered/);
    expect(await orgs.useWebAuthnToken(person.userId, 'cred-1', 5)).toBe(false);
    expect(await orgs.useWebAuthnToken(person.userId, 'cred-1', 4)).toBe(false);
    // The same answer twice at once: one passes.
    const both = await Promise.all([orgs.useWebAuthnToken(person.userId, 'cred-1', 6), orgs.useWebAuthnToken(person.userId, 'cred-1', 6)]);
    expect(both.filter(Boolean)).toHaveLength(1);
    expect(await orgs.useWebAuthnToken(person.userId, 'cred-unknown', 9)).toBe(false);
    const factors = await api(server, 'POST', `/management/v1/users/${person.userId}/auth_factors/_search`, { token: server.pat, body: {} });
    expect(factors.body.result).toEqual([{ state: 'AUTH_FACTOR_STATE_READY', u2f: { id: 't-1', name: 'Key' } }]);
    expect((await api(server, 'DELETE', `/management/v1/users/${person.userId}/auth_factors/u2f/t-1`, { token: server.pat })).status).toBe(200);
    expect(await orgs.useWebAuthnToken(person.userId, 'cred-1', 7)).toBe(false);
  });

  it('passes authenticators without a counter', async () => {
    const person = await createHuman(server);
    const orgs = server.app.ctx.orgs;
    await orgs.addWebAuthnToken(person.userId, { id: 'cred-0', tokenId: 't-0', publicKey: new Uint8Array([1]), counter: 0, name: 'Passkey', kind: 'passwordless', createdAt: Date.now() });
    expect(await orgs.useWebAuthnToken(person.userId, 'cred-0', 0)).toBe(true);
    expect(await orgs.useWebAuthnToken(person.userId, 'cred-0', 0)).toBe(true);
    const listed = await api(server, 'POST', `/management/v1/users/${person.userId}/passwordless/_search`, { token: server.pat, body: {} });
    expect(listed.body.result).toEqual([{ id: 't-0', state: 'AUTH_FACTOR_STATE_READY', name: 'Passkey' }]);
  });

  it("counts a security key's answer only while the sign-in it completes stands for the person as stored", async () => {
    const person = await createHuman(server);
    const { orgs, loginDirectory } = server.app.ctx;
    await orgs.addWebAuthnToken(person.userId, { id: 'cred-s', tokenId: 't-s', publicKey: new Uint8Array([1]), counter: 1, name: 'Key', kind: 'u2f', createdAt: Date.now() });
    const passedAt = Math.floor(server.clock.now() / 1000);
    server.clock.advance(2000);
    // An administrator's lock (and unlock) since the password passed: that sign-in is over, and the answer counts nothing.
    expect((await api(server, 'POST', `/management/v1/users/${person.userId}/_lock`, { token: server.pat, body: {} })).status).toBe(200);
    expect((await api(server, 'POST', `/management/v1/users/${person.userId}/_unlock`, { token: server.pat, body: {} })).status).toBe(200);
    expect(await loginDirectory.useWebAuthn(person.userId, 'cred-s', 2, passedAt)).toBe(false);
    // A sign-in begun after it: the same counter is still ahead, so nothing was stored before.
    server.clock.advance(2000);
    expect(await loginDirectory.useWebAuthn(person.userId, 'cred-s', 2, Math.floor(server.clock.now() / 1000))).toBe(true);
  });
});
