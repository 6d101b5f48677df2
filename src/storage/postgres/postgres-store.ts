import type pg from 'pg';
import { WriteConflict } from '../../model/errors.js';
import type { Lease } from '../decisions.js';
import { GroupedLooks } from './grouped-looks.js';
import type { KeyRange, RecordKey, RecordKind, RecordWrite, StoreBoundedGroup, StorePort, StoreRead } from '../store-port.js';
import { codec } from './codec.js';
import { storeError } from './pool.js';
import { appendEvents } from './activity.js';

/** A decision decided again this many times on rows other nodes keep changing gives up (WriteConflict). */
const TRIES = 64;

/** Records a sweep reads per statement. */
const SWEEP_CHUNK = 2000;

/** Higher than any byte of UTF-8: a prefix followed by it bounds every key that starts with the prefix. */
const AFTER_PREFIX = Buffer.from([0xff]);

const keyBytes = (key: RecordKey): Buffer => (typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key.buffer, key.byteOffset, key.byteLength));

interface Row {
  value: Buffer;
  version: string;
}

type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * The store port on PostgreSQL (`sesame_records`, migrations.ts): one row per record, the value
 * msgpack as LMDB stores it. Every node decides in the database, never in its memory:
 * - one statement each where the decision is data: a first use (`INSERT … ON CONFLICT DO NOTHING`),
 *   a take (`DELETE … RETURNING`), a raise (`INSERT … ON CONFLICT DO UPDATE … WHERE n < $n`);
 * - a decision computed by a callback (claim once, update, lease) reads the row and its version,
 *   computes, and writes with `WHERE version = $read`: one conditional statement, decided again
 *   when another node changed the row in between (so a node never writes from a stale read);
 * - a decision that carries other writes (`also`, bounded groups) runs them in one transaction with
 *   that conditional statement, so they land together or not at all.
 * A commit is as durable as the server's `synchronous_commit` makes it (`on`: flushed to its WAL).
 */
export class PostgresStore implements StorePort {
  private readonly looks: GroupedLooks;

  constructor(private readonly pool: pg.Pool) {
    this.looks = new GroupedLooks(pool, keyBytes);
  }

  async get<V, K extends RecordKey>(kind: RecordKind<V, K>, key: K): Promise<V | undefined> {
    const { rows } = await this.pool.query<Row>('SELECT value FROM sesame_records WHERE kind = $1 AND key = $2', [kind.name, keyBytes(key)]);
    return rows[0] ? (codec.unpack(rows[0].value) as V) : undefined;
  }

  /** See GroupedLooks: a thread's looks share statements. */
  present(reads: readonly StoreRead[]): Promise<boolean[]> {
    return this.looks.look(reads);
  }

  async range<V>(kind: RecordKind<V, string>, prefix: string, limit?: number): Promise<{ key: string; value: V }[]> {
    const start = keyBytes(prefix);
    const { rows } = await this.pool.query<{ key: Buffer; value: Buffer }>(
      `SELECT key, value FROM sesame_records WHERE kind = $1 AND key >= $2 AND key < $3 ORDER BY key${limit === undefined ? '' : ' LIMIT $4'}`,
      [kind.name, start, Buffer.concat([start, AFTER_PREFIX]), ...(limit === undefined ? [] : [limit])],
    );
    return rows.map((row) => ({ key: row.key.toString('utf8'), value: codec.unpack(row.value) as V }));
  }

  async put<V, K extends RecordKey>(kind: RecordKind<V, K>, key: K, value: V): Promise<void> {
    await putRow(this.pool, kind.name, keyBytes(key), value);
  }

  async remove<K extends RecordKey>(kind: RecordKind<any, K>, key: K): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM sesame_records WHERE kind = $1 AND key = $2', [kind.name, keyBytes(key)]);
    return rowCount === 1;
  }

  async write(writes: readonly RecordWrite[]): Promise<void> {
    if (writes.length === 0) return;
    await this.inTransaction(async (client) => {
      await applyWrites(client, writes);
      return true;
    });
  }

  async insertIfAbsent<V>(kind: RecordKind<V, string>, key: string, value: V): Promise<boolean> {
    const { rowCount } = await this.pool.query('INSERT INTO sesame_records (kind, key, value) VALUES ($1, $2, $3) ON CONFLICT (kind, key) DO NOTHING', [kind.name, keyBytes(key), codec.pack(value)]);
    return rowCount === 1;
  }

  async claimOnce<V>(kind: RecordKind<V, string>, key: string, claim: (record: V) => V | undefined): Promise<{ found: V | undefined; claimed: boolean }> {
    const bytes = keyBytes(key);
    for (let tries = 0; tries < TRIES; tries++) {
      const row = await this.read(this.pool, kind.name, bytes);
      if (!row) return { found: undefined, claimed: false };
      const found = codec.unpack(row.value) as V;
      const claimed = claim(found);
      if (claimed === undefined) return { found, claimed: false };
      if (await this.replace(this.pool, kind.name, bytes, row.version, claimed)) return { found, claimed: true };
    }
    throw new WriteConflict(`${kind.name} ${key}`);
  }

  async takeOnce<V>(kind: RecordKind<V, string>, key: string, also?: (found: V) => readonly RecordWrite[]): Promise<V | undefined> {
    const take = async (client: Queryable) => {
      const { rows } = await client.query<Row>('DELETE FROM sesame_records WHERE kind = $1 AND key = $2 RETURNING value', [kind.name, keyBytes(key)]);
      return rows[0] ? (codec.unpack(rows[0].value) as V) : undefined;
    };
    if (!also) return take(this.pool);
    let taken: V | undefined;
    await this.inTransaction(async (client) => {
      taken = await take(client);
      if (taken !== undefined) await applyWrites(client, also(taken));
      return true;
    });
    return taken;
  }

  async raiseTo(kind: RecordKind<number, string>, key: string, value: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO sesame_records (kind, key, value, n) VALUES ($1, $2, $3, $4)
       ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value, n = EXCLUDED.n, version = sesame_records.version + 1
       WHERE sesame_records.n IS NULL OR sesame_records.n < EXCLUDED.n`,
      [kind.name, keyBytes(key), codec.pack(value), value],
    );
    return rowCount === 1;
  }

  async insertBounded<V>(kind: RecordKind<V, string>, key: string, value: (slot: string) => V, group: StoreBoundedGroup): Promise<string> {
    let slot = '';
    await this.inTransaction(async (client) => {
      // The group's meta row, locked for the transaction: inserts into one group take turns.
      const metaKey = keyBytes(`${group.name}#`);
      await client.query('INSERT INTO sesame_records (kind, key, value) VALUES ($1, $2, $3) ON CONFLICT (kind, key) DO NOTHING', [group.index.name, metaKey, codec.pack({ next: 0, size: 0 })]);
      const { rows } = await client.query<Row>('SELECT value FROM sesame_records WHERE kind = $1 AND key = $2 FOR UPDATE', [group.index.name, metaKey]);
      const meta = codec.unpack(rows[0]!.value) as { next: number; size: number };
      let size = meta.size;
      if (size >= group.max) {
        const places = keyBytes(`${group.name}/`);
        const { rows: oldest } = await client.query<{ key: Buffer; value: Buffer }>(
          'DELETE FROM sesame_records WHERE kind = $1 AND key IN (SELECT key FROM sesame_records WHERE kind = $1 AND key >= $2 AND key < $3 ORDER BY key LIMIT $4) RETURNING key, value',
          [group.index.name, places, Buffer.concat([places, AFTER_PREFIX]), size - group.max + 1],
        );
        for (const place of oldest) {
          await client.query('DELETE FROM sesame_records WHERE kind = $1 AND key = $2', [kind.name, keyBytes(codec.unpack(place.value) as string)]);
        }
        size -= oldest.length;
      }
      slot = `${group.name}/${String(meta.next).padStart(12, '0')}`;
      await putRow(client, group.index.name, metaKey, { next: meta.next + 1, size: size + 1 });
      await putRow(client, group.index.name, keyBytes(slot), key);
      await putRow(client, kind.name, keyBytes(key), value(slot));
      return true;
    });
    return slot;
  }

  async lease(kind: RecordKind<Lease, string>, name: string, holder: string, now: number, until: number): Promise<boolean> {
    let held = false;
    await this.update(kind, name, (current) => {
      held = !(current && current.holder !== holder && current.until > now);
      return held ? { holder, until } : undefined;
    });
    return held;
  }

  async update<V>(
    kind: RecordKind<V, string>,
    key: string,
    next: (found: V | undefined) => V | null | undefined,
    also?: (found: V | undefined, next: V | null) => readonly RecordWrite[],
  ): Promise<V | undefined> {
    const bytes = keyBytes(key);
    for (let tries = 0; tries < TRIES; tries++) {
      const row = await this.read(this.pool, kind.name, bytes);
      const found = row ? (codec.unpack(row.value) as V) : undefined;
      const changed = next(found);
      if (changed === undefined) return found;
      const writes = also?.(found, changed) ?? [];
      const decide = (client: Queryable) =>
        row === undefined
          ? changed === null
            ? Promise.resolve(true)
            : this.insert(client, kind.name, bytes, changed)
          : changed === null
            ? this.removeVersion(client, kind.name, bytes, row.version)
            : this.replace(client, kind.name, bytes, row.version, changed);
      const decided =
        writes.length === 0
          ? await decide(this.pool)
          : await this.inTransaction(async (client) => {
              if (!(await decide(client))) return false;
              await applyWrites(client, writes);
              return true;
            });
      if (decided) return changed ?? undefined;
    }
    throw new WriteConflict(`${kind.name} ${key}`);
  }

  async count(kind: RecordKind<any, string>, range?: KeyRange): Promise<number> {
    const { rows } = range
      ? await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM sesame_records WHERE kind = $1 AND key >= $2 AND key < $3', [kind.name, keyBytes(range.start), keyBytes(range.end)])
      : await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM sesame_records WHERE kind = $1', [kind.name]);
    return Number(rows[0]!.n);
  }

  async insertGuarded(
    guard: { absent?: readonly { kind: RecordKind<any, string>; key: string }[]; atMost?: { kind: RecordKind<any, string>; range: KeyRange; max: number } },
    writes: readonly RecordWrite[],
  ): Promise<'written' | 'taken' | 'full'> {
    const { absent = [], atMost } = guard;
    let outcome: 'written' | 'taken' | 'full' = 'written';
    await this.inTransaction(async (client) => {
      outcome = 'written';
      if (atMost) {
        // Inserts counted against one range take turns (a count is no lock on rows not yet there);
        // locked by the range's end, which callers keep fixed (its start may move with the clock).
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${atMost.kind.name}:${atMost.range.end}`]);
        const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM sesame_records WHERE kind = $1 AND key >= $2 AND key < $3', [
          atMost.kind.name,
          keyBytes(atMost.range.start),
          keyBytes(atMost.range.end),
        ]);
        if (Number(rows[0]!.n) >= atMost.max) return ((outcome = 'full'), false);
      }
      const mustBeAbsent = new Set(absent.map(({ kind, key }) => `${kind.name}\u0000${key}`));
      for (const { kind, key } of absent) {
        // One written here is inserted only if absent (below): two nodes cannot both take it.
        if (writes.some((w) => 'kind' in w && w.kind.name === kind.name && w.key === key)) continue;
        const { rowCount } = await client.query('SELECT 1 FROM sesame_records WHERE kind = $1 AND key = $2', [kind.name, keyBytes(key)]);
        if (rowCount) return ((outcome = 'taken'), false);
      }
      for (const write of writes) {
        if ('kind' in write && write.value !== null && mustBeAbsent.has(`${write.kind.name}\u0000${String(write.key)}`)) {
          if (!(await this.insert(client, write.kind.name, keyBytes(write.key), write.value))) return ((outcome = 'taken'), false);
        } else {
          await applyWrites(client, [write]);
        }
      }
      return true;
    });
    return outcome;
  }

  async sweep<V, K extends RecordKey>(kind: RecordKind<V, K>, expired: (record: V) => boolean, also?: (key: K, record: V) => readonly RecordWrite[]): Promise<number> {
    let removed = 0;
    let after: Buffer = Buffer.alloc(0);
    for (;;) {
      const { rows } = await this.pool.query<{ key: Buffer; value: Buffer; version: string }>('SELECT key, value, version FROM sesame_records WHERE kind = $1 AND key > $2 ORDER BY key LIMIT $3', [
        kind.name,
        after,
        SWEEP_CHUNK,
      ]);
      const gone = rows.filter((row) => expired(codec.unpack(row.value) as V));
      if (gone.length > 0 && !also) {
        // Removed only if unchanged since read: a record renewed meanwhile (on any node) stays.
        const { rowCount } = await this.pool.query('DELETE FROM sesame_records WHERE kind = $1 AND (key, version) IN (SELECT * FROM unnest($2::bytea[], $3::bigint[]))', [
          kind.name,
          gone.map((row) => row.key),
          gone.map((row) => row.version),
        ]);
        removed += rowCount ?? 0;
      } else if (gone.length > 0 && also) {
        // Counted once the transaction committed (a deadlock runs it again).
        let inChunk = 0;
        await this.inTransaction(async (client) => {
          inChunk = 0;
          for (const row of gone) {
            if (!(await this.removeVersion(client, kind.name, row.key, row.version))) continue;
            const key = (kind.binaryKeys ? row.key : row.key.toString('utf8')) as K;
            await applyWrites(client, also(key, codec.unpack(row.value) as V));
            inChunk++;
          }
          return true;
        });
        removed += inChunk;
      }
      if (rows.length < SWEEP_CHUNK) return removed;
      after = rows.at(-1)!.key;
    }
  }

  /** A commit is durable once PostgreSQL answered it (as `synchronous_commit` makes it). */
  durable<T>(write: Promise<T>): Promise<T> {
    return write;
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  private async read(client: Queryable, kind: string, key: Buffer): Promise<Row | undefined> {
    const { rows } = await client.query<Row>('SELECT value, version FROM sesame_records WHERE kind = $1 AND key = $2', [kind, key]);
    return rows[0];
  }

  /** The compare-and-set: writes only if the row is still at the version read. */
  private async replace(client: Queryable, kind: string, key: Buffer, version: string, value: unknown): Promise<boolean> {
    const { rowCount } = await client.query('UPDATE sesame_records SET value = $4, version = version + 1 WHERE kind = $1 AND key = $2 AND version = $3', [kind, key, version, codec.pack(value)]);
    return rowCount === 1;
  }

  private async removeVersion(client: Queryable, kind: string, key: Buffer, version: string): Promise<boolean> {
    const { rowCount } = await client.query('DELETE FROM sesame_records WHERE kind = $1 AND key = $2 AND version = $3', [kind, key, version]);
    return rowCount === 1;
  }

  /** Inserts a record read as absent: false when another node inserted it first. */
  private async insert(client: Queryable, kind: string, key: Buffer, value: unknown): Promise<boolean> {
    const { rowCount } = await client.query('INSERT INTO sesame_records (kind, key, value) VALUES ($1, $2, $3) ON CONFLICT (kind, key) DO NOTHING', [kind, key, codec.pack(value)]);
    return rowCount === 1;
  }

  /**
   * Runs `work` in a transaction on one connection: committed when it resolves true, rolled back
   * otherwise. A transaction PostgreSQL aborts for a deadlock (two decisions locking the same rows
   * in opposite orders: a bounded group's insert and a take from it) runs again.
   */
  private async inTransaction(work: (client: pg.PoolClient) => Promise<boolean>): Promise<boolean> {
    for (let tries = 0; ; tries++) {
      const client = await this.pool.connect();
      let done = false;
      try {
        await client.query('BEGIN');
        try {
          done = await work(client);
        } finally {
          await client.query(done ? 'COMMIT' : 'ROLLBACK');
        }
        client.release();
        return done;
      } catch (error) {
        // A connection that failed otherwise is not handed out again.
        client.release(isRetryable(error) ? undefined : (error as Error));
        if (!isRetryable(error) || tries >= TRIES) throw storeError(error);
      }
    }
  }
}

/** Deadlock detected, serialization failure: the transaction did nothing and may run again. */
function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === '40P01' || code === '40001';
}

async function putRow(client: Queryable, kind: string, key: Buffer, value: unknown): Promise<void> {
  await client.query(
    `INSERT INTO sesame_records (kind, key, value) VALUES ($1, $2, $3)
     ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value, n = NULL, version = sesame_records.version + 1`,
    [kind, key, codec.pack(value)],
  );
}

/** Applies a decision's writes on the transaction's connection. */
async function applyWrites(client: Queryable, writes: readonly RecordWrite[]): Promise<void> {
  for (const write of writes) {
    if ('activity' in write) {
      await appendEvents(client, write.activity);
    } else if ('leaveGroup' in write) {
      await leaveGroup(client, write.leaveGroup.name, write.slot);
    } else if (write.value === null) {
      await client.query('DELETE FROM sesame_records WHERE kind = $1 AND key = $2', [write.kind.name, keyBytes(write.key)]);
    } else {
      await putRow(client, write.kind.name, keyBytes(write.key), write.value);
    }
  }
}

/** A record's place out of its bounded group, the group's size one less (its meta row locked till the commit). */
async function leaveGroup(client: Queryable, index: string, slot: string): Promise<void> {
  const { rowCount } = await client.query('DELETE FROM sesame_records WHERE kind = $1 AND key = $2', [index, keyBytes(slot)]);
  if (rowCount !== 1) return;
  const metaKey = keyBytes(`${slot.slice(0, slot.lastIndexOf('/'))}#`);
  const { rows } = await client.query<Row>('SELECT value FROM sesame_records WHERE kind = $1 AND key = $2 FOR UPDATE', [index, metaKey]);
  if (!rows[0]) return;
  const meta = codec.unpack(rows[0].value) as { next: number; size: number };
  await putRow(client, index, metaKey, { ...meta, size: Math.max(0, meta.size - 1) });
}
