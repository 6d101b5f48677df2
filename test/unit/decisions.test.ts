import { lmdbDecisions } from '../../src/storage/decisions.js';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';
import { LeasesActor } from '../../src/actors/leases.js';

/**
 * The store's decisions (src/storage/decisions.ts): first use, claim once, leases, on LMDB, alone and
 * raced by several threads that each open the store (as the HTTP threads do): exactly one wins.
 */
let temp: TempStorage;
afterEach(async () => {
  await temp?.close();
});

interface Code {
  id: string;
  usedAt?: number;
}
const claimUnused = (by: number) => (stored: Code) => (stored.usedAt === undefined ? { ...stored, usedAt: by } : undefined);

describe('decisions on one thread', () => {
  it('insertIfAbsent stores once and keeps the first value', async () => {
    temp = openTempStorage('decisions');
    const { storage } = temp;
    expect(await lmdbDecisions.insertIfAbsent(storage.usedAssertions, 'jti-1', 10)).toBe(true);
    expect(await lmdbDecisions.insertIfAbsent(storage.usedAssertions, 'jti-1', 20)).toBe(false);
    expect(storage.usedAssertions.get('jti-1')).toBe(10);
  });

  it('claimOnce claims a record once, tells the replay what the first did, and nothing of a missing one', async () => {
    temp = openTempStorage('decisions-claim');
    const { storage } = temp;
    await storage.stores.authCodes.put('c1', { id: 'c1' });
    expect(await lmdbDecisions.claimOnce(storage.stores.authCodes, 'nope', claimUnused(1))).toEqual({ found: undefined, claimed: false });
    expect(await lmdbDecisions.claimOnce(storage.stores.authCodes, 'c1', claimUnused(1))).toEqual({ found: { id: 'c1' }, claimed: true });
    expect(await lmdbDecisions.claimOnce(storage.stores.authCodes, 'c1', claimUnused(2))).toEqual({ found: { id: 'c1', usedAt: 1 }, claimed: false });
    expect(storage.stores.authCodes.get('c1')).toEqual({ id: 'c1', usedAt: 1 });
  });

  it('takeOnce gives the record back once and leaves nothing', async () => {
    temp = openTempStorage('decisions-take');
    const { storage } = temp;
    await storage.stores.pushedRequests.put('r1', { id: 'r1' });
    expect(await lmdbDecisions.takeOnce(storage.stores.pushedRequests, 'r1')).toEqual({ id: 'r1' });
    expect(await lmdbDecisions.takeOnce(storage.stores.pushedRequests, 'r1')).toBeUndefined();
    expect(storage.stores.pushedRequests.get('r1')).toBeUndefined();
  });
});

/** A thread that opens the store, waits at the gate with the others, then claims the code and the jti. */
const RACER = `
const { workerData, parentPort } = require('node:worker_threads');
(async () => {
  const { openStorage } = await import(workerData.db);
  const storage = openStorage(workerData.dir, 'commit');
  const gate = new Int32Array(workerData.gate);
  parentPort.postMessage({ ready: true });
  Atomics.wait(gate, 0, 0);
  // Through the store port, as the actors decide.
  const kind = (name) => ({ name, binaryKeys: false });
  const claim = storage.records.claimOnce(kind('authCodes'), 'code', (r) => (r.usedAt === undefined ? { ...r, usedAt: workerData.index } : undefined));
  const first = storage.records.insertIfAbsent(kind('usedAssertions'), 'jti', workerData.index);
  const take = storage.records.takeOnce(kind('pushedRequests'), 'request');
  const [claimed, inserted, taken] = await Promise.all([claim, first, take]);
  await storage.close();
  parentPort.postMessage({ index: workerData.index, claimed: claimed.claimed, first: inserted, taken: taken !== undefined });
})().catch((error) => parentPort.postMessage({ error: String(error) }));
`;

describe('decisions raced by threads', () => {
  it('one code claimed, one jti taken and one pushed request taken by exactly one of six threads at once', async () => {
    temp = openTempStorage('decisions-race');
    await temp.storage.stores.authCodes.put('code', { id: 'code' });
    await temp.storage.stores.pushedRequests.put('request', { id: 'request' });
    await temp.storage.close();
    const gate = new SharedArrayBuffer(8);
    const db = new URL('../../dist/storage/db.js', import.meta.url).href;
    const THREADS = 6;
    const ready: Promise<void>[] = [];
    const results = Array.from(
      { length: THREADS },
      (_, index) =>
        new Promise<{ index: number; claimed: boolean; first: boolean; taken: boolean; error?: string }>((resolve, reject) => {
          const worker = new Worker(RACER, { eval: true, workerData: { db, dir: temp.dir, gate, index } });
          ready.push(new Promise((opened) => worker.once('message', () => opened())));
          worker.once('error', reject);
          // The message after `ready` is the answer.
          worker.once('message', () => worker.once('message', resolve));
        }),
    );
    // Every thread has its store open and waits: then all go at once.
    await Promise.all(ready);
    const counts = new Int32Array(gate);
    Atomics.store(counts, 0, 1);
    Atomics.notify(counts, 0);
    const answers = await Promise.all(results);
    expect(answers.filter((a) => a.error)).toEqual([]);
    const claimers = answers.filter((a) => a.claimed);
    expect(claimers).toHaveLength(1);
    expect(answers.filter((a) => a.first)).toHaveLength(1);
    expect(answers.filter((a) => a.taken)).toHaveLength(1);
    const storage = await temp.reopen();
    expect(storage.stores.authCodes.get('code')).toEqual({ id: 'code', usedAt: claimers[0]!.index });
  });
});

describe('leases', () => {
  it('one holder at a time; the holder renews; another takes over once it expired', async () => {
    temp = openTempStorage('leases');
    const a = new LeasesActor(temp.storage.records);
    const b = new LeasesActor(temp.storage.records);
    expect(await Promise.all([a.hold('sweep', 1000, 0), b.hold('sweep', 1000, 0)])).toEqual([true, false]);
    expect(await a.hold('sweep', 1000, 900)).toBe(true);
    expect(await b.hold('sweep', 1000, 1899)).toBe(false);
    expect(await b.hold('sweep', 1000, 1900)).toBe(true);
    expect(await a.hold('sweep', 1000, 2000)).toBe(false);
    // Another lease is another name.
    expect(await a.hold('rotation', 1000, 2000)).toBe(true);
  });
});
