import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratedDatabase } from '../helpers/postgres.js';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { GroupedLooks } from '../../src/storage/postgres/grouped-looks.js';
import { binaryRecordKind, recordKind, type RecordKey } from '../../src/storage/store-port.js';

/**
 * A thread's looks (StorePort.present) on PostgreSQL go out grouped, one statement in flight: many
 * asked at once are answered each as asked, in far fewer statements; a failed statement fails its
 * own looks only.
 */
const tokens = binaryRecordKind<{ sub: string }>('tokens');
const grants = recordKind<number>('revokedGrants');
const keyBytes = (key: RecordKey) => (typeof key === 'string' ? Buffer.from(key) : Buffer.from(key));

let pool: pg.Pool;
let store: PostgresStore;
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await migratedDatabase('grouped_looks'), max: 2 });
  store = new PostgresStore(pool);
});
afterAll(async () => {
  await pool.end();
});

describe('grouped looks', () => {
  it('200 looks asked at once are each answered as asked, in a few statements', async () => {
    const digests = Array.from({ length: 100 }, (_, i) => new Uint8Array(32).fill(i));
    await store.write(digests.filter((_, i) => i % 2 === 0).map((digest) => ({ kind: tokens, key: digest, value: { sub: 's' } })));
    await store.write([{ kind: grants, key: 'g-7', value: 1 }]);
    let statements = 0;
    const counted = { query: (...args: unknown[]) => (statements++, (pool.query as (...a: unknown[]) => unknown)(...args)) } as unknown as pg.Pool;
    const looks = new GroupedLooks(counted, keyBytes);
    const asked = Array.from({ length: 200 }, (_, i) =>
      looks.look([
        { kind: tokens, key: digests[i % 100]! },
        { kind: grants, key: `g-${i % 10}` },
      ]),
    );
    const answers = await Promise.all(asked);
    answers.forEach((answer, i) => {
      expect(answer).toEqual([(i % 100) % 2 === 0, i % 10 === 7]);
    });
    // One turn's looks go together: one statement (the group's records asked once each).
    expect(statements).toBe(1);
    // Busy (the last statement carried several): a look waits a millisecond for others, and one
    // asked in a later turn meanwhile goes with it.
    const busy = looks.look([{ kind: grants, key: 'g-7' }]);
    await new Promise((resolve) => setImmediate(resolve));
    const next = looks.look([{ kind: grants, key: 'g-2' }]);
    expect(await Promise.all([busy, next])).toEqual([[true], [false]]);
    expect(statements).toBe(2);
    expect(await looks.look([])).toEqual([]);
  });

  it('looks asked while a statement is in flight wait for it, then go together', async () => {
    let statements = 0;
    const counted = { query: (...args: unknown[]) => (statements++, (pool.query as (...a: unknown[]) => unknown)(...args)) } as unknown as pg.Pool;
    const looks = new GroupedLooks(counted, keyBytes);
    // Quiet (nothing before): it goes at the end of this turn.
    const first = looks.look([{ kind: grants, key: 'g-7' }]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(statements).toBe(1);
    const meanwhile = Array.from({ length: 20 }, (_, i) => looks.look([{ kind: grants, key: `g-${i % 10}` }]));
    expect(await first).toEqual([true]);
    expect(await Promise.all(meanwhile)).toEqual(Array.from({ length: 20 }, (_, i) => [i % 10 === 7]));
    expect(statements).toBe(2);
  });

  it('a statement that fails fails its own looks, and the next group still goes', async () => {
    let fail = true;
    const flaky = {
      query: (...args: unknown[]) => {
        if (fail) {
          fail = false;
          return Promise.reject(new Error('connection lost'));
        }
        return (pool.query as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    } as unknown as pg.Pool;
    const looks = new GroupedLooks(flaky, keyBytes);
    const lost = Promise.all([looks.look([{ kind: grants, key: 'g-7' }]), looks.look([{ kind: grants, key: 'g-8' }])]);
    await expect(lost).rejects.toThrow('connection lost');
    expect(await looks.look([{ kind: grants, key: 'g-7' }])).toEqual([true]);
  });
});
