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

/** Events a search reads between pauses for other work. */
const SEARCH_SLICE = 1000;

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
    this.log = new NumberedLog<NewEvent>(
      events,
      (event) => event.at,
      (seq, event) => void byAggregate.remove(indexKey(event.aggregateId, seq)),
    );
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

  /**
   * Reads the log a slice at a time (a filter without an index reads every event it passes), other
   * work running between slices: a search that finds nothing in 100,000 events costs a third of a
   * second of CPU (measured on 2 cores), which must not stall the token requests of its thread.
   */
  async search(query: EventQuery): Promise<ActivityEvent[]> {
    const found: ActivityEvent[] = [];
    let scanned = 0;
    let from = query.from;
    for (;;) {
      this.freshReads();
      let read = 0;
      for (const { seq, entry } of this.candidates(query, from)) {
        read++;
        from = seq;
        const event = { seq, ...entry };
        if (eventMatches(event, query) && found.push(event) >= query.limit) return found;
        if (++scanned >= EVENT_SCAN_LIMIT) return found;
        if (read === SEARCH_SLICE) break;
      }
      if (read < SEARCH_SLICE) return found;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** The events a query passes over, after (or, newest first, before) `from`: by the aggregate's index, else the whole log. */
  private *candidates(query: EventQuery, from: number | undefined): IterableIterator<{ seq: number; entry: NewEvent }> {
    if (query.aggregateId === undefined) {
      const start = from === undefined ? undefined : query.asc ? from + 1 : from - 1;
      yield* this.log.entries({ ...(start === undefined ? {} : { start }), reverse: !query.asc });
      return;
    }
    const prefix = `${query.aggregateId}\u0000`;
    const range = query.asc
      ? { start: from === undefined ? prefix : indexKey(query.aggregateId, from + 1), end: `${prefix}\uffff` }
      : { start: from === undefined ? `${prefix}\uffff` : indexKey(query.aggregateId, from), end: prefix, reverse: true };
    for (const { value: seq } of this.byAggregate.getRange(range)) {
      // A reverse range starts at `start` included: the event numbered `from` itself is not "before" it.
      if (seq === from) continue;
      const entry = this.log.db.get(seq) as NewEvent | undefined;
      if (entry !== undefined) yield { seq, entry };
    }
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
