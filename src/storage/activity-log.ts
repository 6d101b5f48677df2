import type { Database } from 'lmdb';
import { EVENT_SCAN_LIMIT, eventMatches, type ActivityEvent, type EventQuery, type NewEvent } from '../model/activity.js';

/**
 * The activity log's reading side, whichever store holds it (model/activity.ts): a search, and
 * pruning by age (the retention setting). Events are written only inside the transactions of the
 * changes they describe (LMDB: `LmdbActivityLog.append`; PostgreSQL: `appendEvents`), never on their own
 * through this port.
 */
export interface ActivityLog {
  search(query: EventQuery): Promise<ActivityEvent[]>;
  /** Removes events written before `before` (ms), oldest first; resolves with how many went. */
  prune(before: number): Promise<number>;
}

/** Key 0 of the events database holds the highest number pruned so far; events are 1, 2, 3, … */
const PRUNED_THROUGH = 0;

/** An aggregate's index key: its id, then the event's number in a form that sorts as the number does. */
function indexKey(aggregateId: string, seq: number): string {
  return `${aggregateId}\u0000${seq.toString(36).padStart(11, '0')}`;
}

/**
 * The activity log on LMDB: events by number (`activity`), and by aggregate (`activityByAggregate`:
 * a person's or a project's changes without reading the whole log). An event takes its number
 * inside the write transaction that writes the change (the last number there plus one), as the
 * directory's change feed does (DirectoryLog): numbers follow commit order across threads and
 * processes, and an aborted transaction takes its numbers with it.
 */
export class LmdbActivityLog implements ActivityLog {
  /** The last number taken in the transaction callbacks running now (see append). */
  private lastInRun: number | undefined;

  constructor(
    private readonly events: Database<NewEvent | number, number>,
    private readonly byAggregate: Database<number, string>,
    /** Renews this thread's read snapshot when another thread committed since (Storage.freshReads). */
    private readonly freshReads: () => void = () => undefined,
  ) {}

  /** A database of the environment, for a transaction that writes events only. */
  get database(): Database<any, any> {
    return this.events;
  }

  /** Writes events: only inside the write transaction (a transaction callback) of the change they describe. */
  append(events: readonly NewEvent[]): void {
    if (events.length === 0) return;
    // Read once per synchronous run of transaction callbacks (an import's batch writes thousands):
    // nothing else writes in between, the write transaction being this thread's.
    if (this.lastInRun === undefined) {
      this.lastInRun = this.last();
      queueMicrotask(() => (this.lastInRun = undefined));
    }
    for (const event of events) {
      const seq = ++this.lastInRun;
      void this.events.put(seq, event);
      void this.byAggregate.put(indexKey(event.aggregateId, seq), seq);
    }
  }

  search(query: EventQuery): Promise<ActivityEvent[]> {
    this.freshReads();
    const found: ActivityEvent[] = [];
    let scanned = 0;
    const take = (seq: number, stored: NewEvent | number | undefined): boolean => {
      if (stored === undefined || typeof stored === 'number') return true;
      const event = { seq, ...stored } as ActivityEvent;
      if (eventMatches(event, query)) found.push(event);
      return found.length < query.limit && ++scanned < EVENT_SCAN_LIMIT;
    };
    if (query.aggregateId !== undefined) {
      const prefix = `${query.aggregateId}\u0000`;
      const range = query.asc
        ? { start: query.from === undefined ? prefix : indexKey(query.aggregateId, query.from + 1), end: `${prefix}\uffff` }
        : { start: query.from === undefined ? `${prefix}\uffff` : indexKey(query.aggregateId, query.from), end: prefix, reverse: true };
      for (const { key, value: seq } of this.byAggregate.getRange(range)) {
        // A reverse range starts at `start` included: the event numbered `from` itself is not "before" it.
        if (!query.asc && query.from !== undefined && key === indexKey(query.aggregateId, query.from)) continue;
        if (!take(seq, this.events.get(seq))) break;
      }
    } else {
      const range = query.asc
        ? { start: (query.from ?? 0) + 1 }
        : { ...(query.from === undefined ? {} : { start: query.from - 1 }), end: PRUNED_THROUGH, reverse: true };
      for (const { key, value } of this.events.getRange(range)) {
        if (key === PRUNED_THROUGH) continue;
        if (!take(key, value)) break;
      }
    }
    return Promise.resolve(found);
  }

  async prune(before: number, chunk = 2000): Promise<number> {
    let removed = 0;
    for (;;) {
      const n = await this.events.transaction(() => {
        let through = this.prunedThrough();
        let count = 0;
        for (const { key, value } of this.events.getRange({ start: through + 1, limit: chunk })) {
          const event = value as NewEvent;
          if (event.at >= before) break;
          void this.events.remove(key);
          void this.byAggregate.remove(indexKey(event.aggregateId, key));
          through = key;
          count++;
        }
        if (count > 0) void this.events.put(PRUNED_THROUGH, through);
        return count;
      });
      removed += n;
      if (n < chunk) return removed;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** The newest number written (or pruned), 0 for none. */
  private last(): number {
    // Read without `limit` and left early: a range with `limit` fails inside an lmdb-js write transaction.
    for (const { key } of this.events.getRange({ reverse: true })) if (key !== PRUNED_THROUGH) return key;
    return this.prunedThrough();
  }

  private prunedThrough(): number {
    return (this.events.get(PRUNED_THROUGH) as number | undefined) ?? 0;
  }
}
