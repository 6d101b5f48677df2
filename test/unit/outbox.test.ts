import { describe, expect, it } from 'vitest';
import { BackchannelLogoutsActor } from '../../src/actors/backchannel-logouts.js';
import { tempStorageEach } from '../helpers/temp-storage.js';
import { recordKind } from '../../src/storage/store-port.js';

/**
 * The back-channel logout outbox in the store: queued once per session and app whichever thread
 * queues it, announced on the change feed, and claimed by one attempt at a time.
 */
const storage = tempStorageEach('outbox');

describe('the logout outbox', () => {
  it('queues a session and app once across threads, and announces what it queued', async () => {
    const one = new BackchannelLogoutsActor(storage().records, storage().feed);
    const two = new BackchannelLogoutsActor(storage().records, storage().feed);
    const seen = one.changes();
    const woken = one.changesAfter(seen, 60_000);
    const logout = { clientId: 'app', sub: 'u1', sid: 's1' };
    const [a, b] = await Promise.all([one.enqueue([logout, logout], 1000), two.enqueue([logout, { ...logout, clientId: 'other' }], 2000)]);
    expect([...a, ...b].map((r) => r.id).sort()).toEqual(['s1|app', 's1|other']);
    expect(await woken).toBeGreaterThan(seen);
    expect(await one.size()).toBe(2);
    // Nothing new: no announcement.
    const now = one.changes();
    await two.enqueue([logout], 3000);
    expect(one.changes()).toBe(now);
  });

  it('one attempt at a time: a claimed row is not due and not claimed again until its claim ends', async () => {
    const one = new BackchannelLogoutsActor(storage().records, storage().feed);
    const two = new BackchannelLogoutsActor(storage().records, storage().feed);
    await one.enqueue([{ clientId: 'app', sub: 'u1', sid: 's1' }], 1000);
    const claims = await Promise.all([one.claim('s1|app', 1000, 5000), two.claim('s1|app', 1000, 5000)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await two.due(2000)).toEqual([]);
    // A failed attempt ends its claim: due again when its retry is.
    await one.failed('s1|app', 3000, 'HTTP 503');
    expect(await two.due(2999)).toEqual([]);
    expect((await two.due(3000)).map((r) => [r.id, r.failures])).toEqual([['s1|app', 1]]);
    expect(await two.claim('s1|app', 3000, 9000)).toBe(true);
    // A claim left by an attempt that never ended (a crash) expires.
    expect(await one.due(8999)).toEqual([]);
    expect(await one.claim('s1|app', 9000, 12000)).toBe(true);
    await one.done('s1|app');
    expect(await two.size()).toBe(0);
  });

  it('finds what is due by its due time, however many rows wait, and indexes rows an older Sesame queued', async () => {
    const outbox = new BackchannelLogoutsActor(storage().records, storage().feed);
    await outbox.enqueue(
      Array.from({ length: 50 }, (_, i) => ({ clientId: 'app', sub: 'u', sid: `s${String(i).padStart(2, '0')}` })),
      1000,
    );
    for (let i = 0; i < 49; i++) await outbox.failed(`s${String(i).padStart(2, '0')}|app`, 100_000 + i, 'down');
    // One row is due now; the other 49 later, in the order of their due times.
    expect((await outbox.due(2000)).map((r) => r.id)).toEqual(['s49|app']);
    expect((await outbox.due(100_001)).map((r) => r.id)).toEqual(['s49|app', 's00|app', 's01|app']);
    // A row as an older Sesame wrote it: no index key, a claim of its own.
    await storage().records.put(recordKind('backchannelLogouts'), 'old|app', { id: 'old|app', clientId: 'app', sub: 'u', sid: 'old', queuedAt: 500, failures: 2, dueAt: 600, claimedUntil: 700 });
    expect((await outbox.due(2000)).map((r) => r.id)).toEqual(['s49|app']);
    expect(await outbox.reindex()).toBe(1);
    expect(await outbox.reindex()).toBe(0);
    expect((await outbox.due(2000)).map((r) => r.id)).toEqual(['old|app', 's49|app']);
    expect(await outbox.claim('old|app', 2000, 9000)).toBe(true);
    await outbox.done('old|app');
    expect(await outbox.size()).toBe(50);
  });
});
