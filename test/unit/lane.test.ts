import { describe, expect, it } from 'vitest';
import { Lane } from '../../src/workers/lane.js';

describe('Lane', () => {
  it('runs at most `limit` tasks at once, the others in arrival order', async () => {
    const lane = new Lane(1);
    const order: string[] = [];
    const gates: (() => void)[] = [];
    const task = (name: string) => () =>
      new Promise<string>((resolve) => {
        order.push(`start ${name}`);
        gates.push(() => resolve(name));
      });
    const a = lane.run(task('a'));
    const b = lane.run(task('b'));
    const c = lane.run(task('c'));
    await Promise.resolve();
    expect(order).toEqual(['start a']);
    expect(lane.queued).toBe(2);
    gates.shift()!();
    expect(await a).toBe('a');
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['start a', 'start b']);
    gates.shift()!();
    await b;
    await new Promise((r) => setImmediate(r));
    gates.shift()!();
    expect(await c).toBe('c');
    expect(order).toEqual(['start a', 'start b', 'start c']);
  });

  it('frees its place when a task fails', async () => {
    const lane = new Lane(1);
    await expect(lane.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await lane.run(async () => 'next')).toBe('next');
  });
});
