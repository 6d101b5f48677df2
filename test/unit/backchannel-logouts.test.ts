import { afterEach, describe, expect, it } from 'vitest';
import { BackchannelLogoutsActor } from '../../src/actors/backchannel-logouts.js';
import { nextAttemptAt, retryDelay } from '../../src/domain/delivery-retries.js';
import { BACKCHANNEL_LOGOUT_EVENT, logoutAccepted, logoutTokenClaims } from '../../src/protocol/logout-token.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';

/** The back-channel logout rules (claims, backoff) and the outbox actor on real LMDB. */
describe('logout token claims (Back-Channel Logout 1.0 §2.4)', () => {
  it('names the app alone as audience, carries sub, sid and the event, a short exp, and no nonce', () => {
    const claims = logoutTokenClaims({ issuer: 'https://id.example.com', clientId: 'app-1', sub: 'u1', sid: 'V1_s', iat: 1000, jti: 'j1' });
    expect(claims).toEqual({ iss: 'https://id.example.com', aud: 'app-1', iat: 1000, exp: 1120, jti: 'j1', sub: 'u1', sid: 'V1_s', events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } });
    expect(claims).not.toHaveProperty('nonce');
  });

  it('takes 2xx as accepted, a redirect or an error as a failure', () => {
    expect([200, 204].map(logoutAccepted)).toEqual([true, true]);
    expect([301, 302, 400, 500, 503].map(logoutAccepted)).toEqual([false, false, false, false, false]);
  });
});

describe('retry backoff', () => {
  it('doubles from 30 s up to an hour', () => {
    expect([1, 2, 3, 4, 5, 7, 8, 50].map(retryDelay)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 1_920_000, 3_600_000, 3_600_000]);
  });

  it('gives up when the next attempt would fall after the window', () => {
    expect(nextAttemptAt(0, 1, 0, 60_000)).toBe(30_000);
    expect(nextAttemptAt(0, 2, 30_000, 60_000)).toBeUndefined();
    expect(nextAttemptAt(0, 2, 0, 60_000)).toBe(60_000);
  });
});

describe('BackchannelLogoutsActor', () => {
  let temp: TempStorage | undefined;

  /** The outbox over the data dir opened again (a restart). */
  const reopenedOutbox = async () => {
    const storage = await temp!.reopen();
    return new BackchannelLogoutsActor(storage.records, storage.feed);
  };

  afterEach(async () => {
    await temp?.close();
    temp = undefined;
  });

  it('queues once per session and app, keeps failures and due times across a reopen, and forgets what is done', async () => {
    temp = openTempStorage('bcl');
    const outbox = new BackchannelLogoutsActor(temp.storage.records, temp.storage.feed);
    const queued = await outbox.enqueue(
      [
        { clientId: 'a', sub: 'u', sid: 's1' },
        { clientId: 'a', sub: 'u', sid: 's1' },
        { clientId: 'b', sub: 'u', sid: 's1' },
      ],
      1000,
    );
    expect(queued.map((q) => q.id)).toEqual(['s1|a', 's1|b']);
    expect(await outbox.enqueue([{ clientId: 'a', sub: 'u', sid: 's1' }], 2000)).toEqual([]);
    await outbox.failed('s1|a', 31_000, 'HTTP 503');
    expect((await outbox.due(1000, 10)).map((r) => r.id)).toEqual(['s1|b']);

    const reopened = await reopenedOutbox();
    expect(await reopened.size()).toBe(2);
    expect(await reopened.get('s1|a')).toMatchObject({ failures: 1, dueAt: 31_000, queuedAt: 1000, lastError: 'HTTP 503' });
    expect((await reopened.due(31_000, 10)).map((r) => r.id)).toEqual(['s1|b', 's1|a']);
    expect((await reopened.due(31_000, 1)).map((r) => r.id)).toEqual(['s1|b']);
    await reopened.done('s1|b');
    const again = await reopenedOutbox();
    expect([...(await again.due(Infinity, 10))].map((r) => r.id)).toEqual(['s1|a']);
  });
});
