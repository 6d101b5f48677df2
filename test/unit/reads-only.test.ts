import { describe, expect, it } from 'vitest';
import { OrgsActor, ORGS_READS } from '../../src/actors/orgs.js';
import { readsOnly } from '../../src/threads/owner-only.js';
import { NeedsOwner } from '../../src/model/errors.js';
import { tempStorageEach } from '../helpers/temp-storage.js';

/**
 * A part an acceptor thread may only read (the signing keys, which the main thread rotates) stands
 * behind a guard: reads answer, a write throws NeedsOwner before anything changed (the request then
 * goes whole to the main thread).
 */
const storage = tempStorageEach('reads-only');

describe('readsOnly', () => {
  it('lets the listed reads through and refuses every other method before it runs', async () => {
    const s = storage();
    const orgs = new OrgsActor(s, 'localhost');
    await orgs.addOrg({ id: 'o1', name: 'One' });
    const guarded = readsOnly(orgs, ORGS_READS, 'orgs');
    expect(guarded.getOrg('o1')?.name).toBe('One');
    expect(guarded.findOrgByDomain('one.localhost')?.id).toBe('o1');
    expect(guarded.instanceDomain).toBe('localhost');
    expect(() => guarded.addOrg({ id: 'o2', name: 'Two' })).toThrow(NeedsOwner);
    expect(() => guarded.takeChange('orgs', 'o1')).toThrow(NeedsOwner);
    // Nothing was written, and a guard is never mistaken for a promise.
    expect(orgs.getOrg('o2')).toBeUndefined();
    expect(s.stores.orgs.get('o2')).toBeUndefined();
    expect((guarded as unknown as { then?: unknown }).then).toBeUndefined();
  });
});
