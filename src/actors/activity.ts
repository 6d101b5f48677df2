import { stampEvents, type ActivityEvent, type Editor, type EventDraft, type EventQuery } from '../model/activity.js';
import type { ActivityLog } from '../storage/activity-log.js';
import type { StorePort } from '../storage/store-port.js';
import { clock } from '../util/clock.js';

/**
 * The activity log (model/activity.ts) for the services: its search, its pruning (the retention
 * setting), and events that stand on their own. Most events are not written here: the store writes
 * them in the transaction of the change they describe (a directory commit, a sign-in's session).
 */
export class ActivityActor {
  constructor(
    private readonly log: ActivityLog,
    private readonly store: Pick<StorePort, 'write' | 'durable'>,
  ) {}

  search(query: EventQuery): Promise<ActivityEvent[]> {
    return this.log.search(query);
  }

  /** Removes what is older than `before` (ms); resolves with how many events went. */
  prune(before: number): Promise<number> {
    return this.log.prune(before);
  }

  /**
   * Writes events that change nothing else (a failed sign-in of a name nobody has, an
   * impersonation about to be answered with its tokens), durably: what follows them (the tokens)
   * is handed out only once the log holds them.
   */
  async record(drafts: readonly EventDraft[], by: Editor): Promise<void> {
    if (drafts.length === 0) return;
    await this.store.durable(this.store.write([{ activity: stampEvents(drafts, by, clock.now()) }]));
  }
}
