import { recordKind, type ChangeFeed, type FeedKind, type RecordKind, type RecordWrite, type StorePort } from '../storage/store-port.js';

/**
 * A durable outbox in the store: rows written before the request that queued them answers, tried
 * by one deliverer at a time, retried until they succeed or are given up. A row's next look is an
 * index key (`<due time>|<id>`) written in the same commit as the row, so finding what is due reads
 * the due keys in order and stops at the first one in the future, however many rows wait.
 *
 * An attempt claims its row first, by moving its due time to the end of the attempt's deadline:
 * another deliverer (thread or node) does not take it meanwhile, and a deliverer that dies mid-way
 * leaves a row that comes due again when its claim runs out.
 */
export interface OutboxEntry {
  id: string;
  /** When it was queued (ms): the retry window counts from here. */
  queuedAt: number;
  /** Failed attempts so far. */
  failures: number;
  /** When it is next looked at (ms): due, or the end of an attempt's claim. */
  dueAt: number;
  /** An attempt holds it (until dueAt). */
  claimed?: true;
  /** What the last attempt met. */
  lastError?: string;
  /** Given up for good (ms); kept for operators to see until swept. */
  failedAt?: number;
}

const dueKey = (dueAt: number, id: string) => `${String(Math.max(0, Math.floor(dueAt))).padStart(15, '0')}|${id}`;

export class Outbox<R extends OutboxEntry> {
  private readonly rows: RecordKind<R>;
  private readonly due: RecordKind<1>;

  constructor(
    private readonly store: StorePort,
    private readonly feed: ChangeFeed,
    /** The store's names: `<name>` for the rows, `<name>Due` for the index. */
    name: string,
    private readonly feedKind: FeedKind,
  ) {
    this.rows = recordKind<R>(name);
    this.due = recordKind<1>(`${name}Due`);
  }

  /** How many changes the feed announced so far (on any thread or node). */
  changes(): number {
    return this.feed.version(this.feedKind);
  }

  /** Resolves once the feed announces changes after `seen`, or after `timeoutMs`; with the count then. */
  changesAfter(seen: number, timeoutMs: number): Promise<number> {
    return this.feed.after(this.feedKind, seen, timeoutMs);
  }

  get(id: string): Promise<R | undefined> {
    return this.store.get(this.rows, id);
  }

  /** Every row, queued and given up, in id order, at most `limit`. */
  async list(limit: number): Promise<R[]> {
    return (await this.store.range(this.rows, '', limit)).map((r) => r.value);
  }

  size(): Promise<number> {
    return this.store.count(this.rows);
  }

  /**
   * Queues rows (one whose id is queued already stays as it is); resolves with the rows this call
   * queued once durable, and announces them on the feed, which wakes the deliverer.
   */
  async enqueue(rows: readonly R[]): Promise<R[]> {
    const queued = await this.store.durable(
      Promise.all(
        rows.map(async (row) => {
          const written = await this.store.insertGuarded({ absent: [{ kind: this.rows, key: row.id }] }, [
            { kind: this.rows, key: row.id, value: row },
            { kind: this.due, key: dueKey(row.dueAt, row.id), value: 1 },
          ]);
          return written === 'written' ? [row] : [];
        }),
      ),
    );
    const fresh: R[] = queued.flat();
    if (fresh.length > 0) this.feed.announce(this.feedKind);
    return fresh;
  }

  /** The rows due at `now` (claims run out count as due), longest waiting first, at most `limit`. */
  async dueAt(now: number, limit: number): Promise<R[]> {
    const due: R[] = [];
    for (const { key } of await this.store.range(this.due, '', limit)) {
      const at = Number(key.slice(0, key.indexOf('|')));
      if (at > now) break;
      const row = await this.store.get(this.rows, key.slice(key.indexOf('|') + 1));
      if (row && row.failedAt === undefined && row.dueAt <= now) due.push(row);
    }
    return due;
  }

  /** Claims a due row for an attempt until `until`: true when this caller may try it. */
  async claim(id: string, now: number, until: number): Promise<boolean> {
    let claimed = false;
    await this.move(id, (row) => {
      claimed = row.failedAt === undefined && row.dueAt <= now;
      return claimed ? { ...row, dueAt: until, claimed: true } : undefined;
    });
    return claimed;
  }

  /** Delivered (or nothing left to deliver): the row goes. */
  async done(id: string): Promise<void> {
    await this.store.durable(this.store.takeOnce(this.rows, id, (found) => [{ kind: this.due, key: dueKey(found.dueAt, id), value: null }]));
  }

  /** An attempt failed: counted, tried again at `dueAt`. */
  failed(id: string, dueAt: number, error: string): Promise<R | undefined> {
    return this.move(id, (row) => {
      const { claimed: _ended, ...rest } = row;
      return { ...rest, failures: row.failures + 1, dueAt, lastError: error } as R;
    });
  }

  /** Given up: kept, out of the queue, for operators to see (until swept). */
  givenUp(id: string, now: number, error: string): Promise<R | undefined> {
    return this.move(id, (row) => {
      const { claimed: _ended, ...rest } = row;
      return { ...rest, failures: row.failures + 1, lastError: error, failedAt: now } as R;
    });
  }

  /** A given-up row queued again, due at once (an operator's retry); undefined when there is no such row. */
  async retry(id: string, now: number): Promise<R | undefined> {
    let retried = false;
    const row = await this.move(id, (found) => {
      retried = found.failedAt !== undefined;
      if (!retried) return undefined;
      const { failedAt: _was, ...rest } = found;
      return { ...rest, queuedAt: now, failures: 0, dueAt: now } as R;
    });
    if (!retried) return undefined;
    this.feed.announce(this.feedKind);
    return row;
  }

  /** Rows waiting for a retry are due at once (what they waited for came: a relay was configured). */
  async allDueNow(now: number, limit: number): Promise<void> {
    const waiting = (await this.store.range(this.due, '', limit)).map(({ key }) => key.slice(key.indexOf('|') + 1));
    await Promise.all(waiting.map((id) => this.move(id, (row) => (row.claimed || row.failedAt !== undefined || row.dueAt <= now ? undefined : ({ ...row, dueAt: now } as R)))));
    if (waiting.length > 0) this.feed.announce(this.feedKind);
  }

  /** An attempt cut short (shutdown): due again at once. */
  release(id: string, now: number): Promise<R | undefined> {
    return this.move(id, (row) => {
      if (!row.claimed) return undefined;
      const { claimed: _ended, ...rest } = row;
      return { ...rest, dueAt: now } as R;
    });
  }

  /**
   * Gives every queued row its index key (rows written before the outbox had one: a data dir or
   * database of an older Sesame); resolves with how many it wrote. An extra key is harmless.
   */
  async reindex(): Promise<number> {
    let written = 0;
    for (const { value: row } of await this.store.range(this.rows, '')) {
      if (row.failedAt !== undefined || (await this.store.present([{ kind: this.due, key: dueKey(row.dueAt, row.id) }]))[0]) continue;
      await this.store.put(this.due, dueKey(row.dueAt, row.id), 1);
      written++;
    }
    return written;
  }

  /** Removes given-up rows older than `before` (ms). */
  sweep(before: number): Promise<number> {
    return this.store.sweep(this.rows, (row) => row.failedAt !== undefined && row.failedAt < before);
  }

  /** Changes a row and its index key in one commit; `next` undefined leaves it. */
  private move(id: string, next: (row: R) => R | undefined): Promise<R | undefined> {
    return this.store.durable(
      this.store.update(
        this.rows,
        id,
        (found) => (found ? next(found) : undefined),
        (found, changed) => {
          if (!found || !changed) return [];
          const writes: RecordWrite[] = [{ kind: this.due, key: dueKey(found.dueAt, id), value: null }];
          // A given-up row leaves the queue; any other is looked at again at its due time.
          if (changed.failedAt === undefined) writes.push({ kind: this.due, key: dueKey(changed.dueAt, id), value: 1 });
          return writes;
        },
      ),
    );
  }
}
