import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_PUSHED_PER_CLIENT, PushedRequestsActor } from '../../src/actors/pushed-requests.js';
import { DecidedElsewhere } from '../../src/model/errors.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';

/** The pushed requests actor on real LMDB: the bound per client, and single use. */
const T0 = 1_800_000_000_000;
let temp: TempStorage;

beforeEach(() => {
  temp = openTempStorage('pushed-requests');
});
afterEach(async () => {
  await temp.close();
});

describe('PushedRequestsActor', () => {
  it('keeps at most MAX_PUSHED_PER_CLIENT per client: the oldest makes room, other clients keep theirs', async () => {
    const pushed = new PushedRequestsActor(temp.storage.records);
    const params = new Map([['scope', ['openid']]]);
    const other = await pushed.push('c2', params, T0);
    const first = await pushed.push('c1', params, T0);
    const second = await pushed.push('c1', params, T0);
    for (let i = 2; i < MAX_PUSHED_PER_CLIENT; i++) await pushed.push('c1', params, T0);
    const newest = await pushed.push('c1', params, T0);
    expect(await pushed.take(first.requestUri, 'c1', T0)).toBeUndefined();
    expect(await pushed.take(second.requestUri, 'c1', T0)).toBeDefined();
    await (await pushed.take(newest.requestUri, 'c1', T0))!.removed;
    expect(await pushed.take(other.requestUri, 'c2', T0)).toBeDefined();
    // Used once.
    expect(await pushed.take(newest.requestUri, 'c1', T0)).toBeUndefined();
    // Another client's use does not spend it.
    const third = await pushed.push('c1', params, T0);
    expect(await pushed.take(third.requestUri, 'c2', T0)).toBeUndefined();
    expect(await pushed.take(third.requestUri, 'c1', T0)).toBeDefined();
  });

  it('a used request frees its place: a client that used what it pushed is not pushed out of its waiting ones', async () => {
    const pushed = new PushedRequestsActor(temp.storage.records);
    const params = new Map([['scope', ['openid']]]);
    const waiting = await pushed.push('c1', params, T0);
    for (let i = 1; i < MAX_PUSHED_PER_CLIENT; i++) {
      const used = await pushed.push('c1', params, T0);
      await (await pushed.take(used.requestUri, 'c1', T0))!.removed;
    }
    // One waiting and the bound not reached: the next push leaves the oldest waiting one alone.
    await pushed.push('c1', params, T0);
    expect(await pushed.take(waiting.requestUri, 'c1', T0)).toBeDefined();
  });

  it('the store decides between threads: of two actors on one store (two threads), one takes the request', async () => {
    const a = new PushedRequestsActor(temp.storage.records);
    const { requestUri } = await a.push('client-1', new Map([['scope', ['openid']]]), T0);
    const b = new PushedRequestsActor(temp.storage.records);
    const first = (await a.take(requestUri, 'client-1', T0))!;
    const second = (await b.take(requestUri, 'client-1', T0))!;
    expect(first.params.get('scope')).toEqual(['openid']);
    const settled = await Promise.allSettled([first.removed, second.removed]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected']);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(DecidedElsewhere);
  });
});
