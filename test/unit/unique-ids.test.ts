import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Ids that must not repeat across HTTP threads (and nodes): a token's jti, a grant, a browser
 * session. newId's per-thread sequence repeats when two threads draw the same one in the same
 * millisecond (what once revoked a JWT with another's jti); newUniqueId adds random digits.
 */
const IDS = fileURLToPath(new URL('../../dist/util/ids.js', import.meta.url));

function idsFromThread(fn: 'newUniqueId', count: number): Promise<string[]> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.path).then((ids) => {
      const out = [];
      for (let i = 0; i < workerData.count; i++) out.push(ids[workerData.fn]());
      parentPort.postMessage(out);
    });`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { path: IDS, fn, count } });
    worker.once('message', (ids: string[]) => resolve(ids));
    worker.once('error', reject);
  });
}

const duplicates = (ids: string[]) => ids.length - new Set(ids).size;

describe('ids across threads', () => {
  it('newUniqueId does not repeat across four threads drawing at once', async () => {
    const all = (await Promise.all(Array.from({ length: 4 }, () => idsFromThread('newUniqueId', 100_000)))).flat();
    expect(all).toHaveLength(400_000);
    expect(duplicates(all)).toBe(0);
    expect(all.every((id) => /^\d{30,31}$/.test(id))).toBe(true);
  });
});
