import type { Database } from 'lmdb';
import { NumberedLog } from './numbered-log.js';
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

/** An aggregate's index key: its id, then the event's number in a form that sorts as the number does. */
function indexKey(aggregateId: string, seq: number): string {
  return `${aggregateId}\u0000${seq.toString(36).padStart(11, '0')}`;
}

/**
 * The activity log on LMDB: events by number (`activity`, a NumberedLog: numbered inside the write
 * transaction of the change they describe, so numbers follow commit order across threads and
 * processes), and by aggregate (`activityByAggregate`: a person's or a project's changes without
 * reading the whole log).
 */
export class LmdbActivityLog implements ActivityLog {
  private readonly log: NumberedLog<NewEvent>;

  constructor(
    events: Database<NewEvent | number, number>,
    private readonly byAggregate: Database<number, string>,
    /** Renews this thread's read snapshot when another thread committed since (Storage.freshReads). */
    private readonly freshReads: () => void = () => undefined,
  ) {
    this.log = new NumberedLog<NewEvent>(events, (event) => event.at, (seq, event) => void byAggregate.remove(indexKey(event.aggregateId, seq)));
  }

  /** A database of the environment, for a transaction that writes events only. */
  get database(): Database<any, any> {
    return this.log.db;
  }

  /** Writes events: only inside the write transaction (a transaction callback) of the change they describe. */
  append(events: readonly NewEvent[]): void {
    for (const event of events) {
      const seq = this.log.append(event);
      void this.byAggregate.put(indexKey(event.aggregateId, seq), seq);
    }
  }

  search(query: EventQuery): Promise<ActivityEvent[]> {
    this.freshReads();
    const found: ActivityEvent[] = [];
    let scanned = 0;
    const take = (seq: number, stored: NewEvent | undefined): boolean => {
      if (stored !== undefined) {
        const event = { seq, ...stored };
        if (eventMatches(event, query)) found.push(event);
      }
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
        if (!take(seq, this.log.db.get(seq) as NewEvent | undefined)) break;
      }
    } else {
      const start = query.from === undefined ? undefined : query.asc ? query.from + 1 : query.from - 1;
      for (const { seq, entry } of this.log.entries({ ...(start === undefined ? {} : { start }), reverse: !query.asc })) {
        if (!take(seq, entry)) break;
      }
    }
    return Promise.resolve(found);
  }

  prune(before: number): Promise<number> {
    return this.log.prune(before);
  }

  /** Every event, oldest first, and the pruned mark (a copy of the log into PostgreSQL). */
  entries(): IterableIterator<{ seq: number; entry: NewEvent }> {
    return this.log.entries();
  }

  prunedThrough(): number {
    return this.log.prunedThrough();
  }

  /** Puts events copied from elsewhere under their own numbers (a new data dir: PostgreSQL's log copied back). */
  load(events: readonly ActivityEvent[], prunedThrough: number): void {
    for (const { seq, ...event } of events) {
      void this.log.db.put(seq, event);
      void this.byAggregate.put(indexKey(event.aggregateId, seq), seq);
    }
    this.log.markPrunedThrough(prunedThrough);
  }
}
