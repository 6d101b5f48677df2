import { describe, expect, it } from 'vitest';
import { Batcher, Slots } from '../../src/workers/batcher.js';
import { chooseSignerMode } from '../../src/workers/signer.js';

/** The pool batcher: items queued while the pool is busy travel together; order and errors are kept. */
function deferredRunner() {
  const calls: { items: number[]; finish: (fail?: boolean) => void }[] = [];
  const send = (items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      calls.push({ items, finish: (fail) => (fail ? reject(new Error('boom')) : resolve(items.map((i) => i * 10))) });
    });
  return { calls, send };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('Batcher', () => {
  it('sends one batch per turn and batches what queues while the slots are taken', async () => {
    const { calls, send } = deferredRunner();
    const batcher = new Batcher(send, new Slots(() => 1), 256, 'sign');
    const first = [1, 2, 3].map((n) => batcher.submit(n));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2, 3]]);
    const second = [4, 5].map((n) => batcher.submit(n));
    await tick();
    // The only slot is busy: 4 and 5 wait for it.
    expect(calls).toHaveLength(1);
    calls[0]!.finish();
    expect(await Promise.all(first)).toEqual([10, 20, 30]);
    await tick();
    expect(calls.map((c) => c.items)).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    calls[1]!.finish();
    expect(await Promise.all(second)).toEqual([40, 50]);
  });

  it('shares slots between batchers and wakes the waiting ones', async () => {
    const a = deferredRunner();
    const b = deferredRunner();
    const slots = new Slots(() => 1);
    const ba = new Batcher(a.send, slots, 256, 'sign');
    const bb = new Batcher(b.send, slots, 256, 'verify');
    const pa = ba.submit(1);
    const pb = bb.submit(2);
    await tick();
    expect(a.calls.length + b.calls.length).toBe(1);
    (a.calls[0] ?? b.calls[0])!.finish();
    await tick();
    await tick();
    expect(a.calls.length + b.calls.length).toBe(2);
    for (const c of a.calls[0] && b.calls[0] ? [a.calls[0], b.calls[0]] : []) c.finish();
    expect(await pa).toBe(10);
    expect(await pb).toBe(20);
  });

  it('rejects every item of a failed batch and keeps going', async () => {
    const { calls, send } = deferredRunner();
    const batcher = new Batcher(send, new Slots(() => 2), 2, 'sign');
    const items = [1, 2, 3].map((n) => batcher.submit(n).catch((e: Error) => e.message));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2], [3]]);
    calls[0]!.finish(true);
    calls[1]!.finish();
    expect(await Promise.all(items)).toEqual(['boom', 'boom', 30]);
  });
});

describe('signer choice', () => {
  it('signs in the pool when one HTTP thread leaves a core to spare, inline otherwise (every HTTP thread alike), unless told', () => {
    expect(chooseSignerMode('auto', 2)).toBe('pool');
    expect(chooseSignerMode('auto', 1)).toBe('inline');
    expect(chooseSignerMode('auto', 16, 2)).toBe('inline');
    expect(chooseSignerMode('inline', 8)).toBe('inline');
    expect(chooseSignerMode('pool', 1)).toBe('pool');
    expect(chooseSignerMode('pool', 16, 8)).toBe('pool');
  });
});
