/** Who made a change: a user (person or machine) or Sesame itself, through which surface, from which address. */
export interface Editor {
  /** The user id; `SYSTEM` for Sesame's own work (a key rotation, a sweep, a start). */
  readonly userId: string;
  /** Through what: `admin` (instance API), `management`, `auth`, `login`, `oidc`, `import`, `cli`, `system`. */
  readonly service: string;
  /** The client's address, when the change came over HTTP. */
  readonly address?: string | undefined;
}

export const SYSTEM_USER = 'SYSTEM';
export const SYSTEM: Editor = { userId: SYSTEM_USER, service: 'system' };

/** What an event says happened, before the store numbers and stamps it. */
export interface EventDraft {
  /** ZITADEL's event type where it has one (`user.locked`, `user.human.password.changed`, `project.added`). */
  readonly type: string;
  /** The object the event belongs to: its kind (`user`, `org`, `project`, `instance`, `usergrant`, `key_pair`) and id. */
  readonly aggregateType: string;
  readonly aggregateId: string;
  /** The org the object belongs to; the instance's id (`''`) for instance-wide objects. */
  readonly resourceOwner: string;
  /** A part of the object the event is about (an app of a project, a token of a user), when there is one. */
  readonly objectId?: string | undefined;
  /** What changed, as values safe to show to whoever may read the log. */
  readonly payload?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * An event of the activity log, as stored: numbered in commit order (`seq`), stamped with when and
 * by whom.
 *
 * The activity log: what happened to the instance, who did it and from where. Every change of the
 * directory (orgs, users, projects, apps, grants, policies, keys, settings) is described by events
 * the store writes in the same transaction as the change (model/row-events.ts says which); a sign-in,
 * a failed one, an impersonation are events written with the state they change. Append-only, on
 * both stores; ZITADEL's event API (`POST /admin/v1/events/_search`) and the per-object
 * `…/changes/_search` read it. An event never holds a token, a secret or a password (not even a
 * hash): only names of what changed and values a person may see anyway.
 */
export interface ActivityEvent extends EventDraft {
  readonly seq: number;
  /** When (epoch ms, the injected clock). */
  readonly at: number;
  readonly editor: string;
  readonly service: string;
  readonly address?: string | undefined;
}

/** An event about to be written: stamped, not yet numbered. */
export type NewEvent = Omit<ActivityEvent, 'seq'>;

/** Stamps drafts with their editor and time. */
export function stampEvents(drafts: readonly EventDraft[], by: Editor, at: number): NewEvent[] {
  return drafts.map((draft) => ({
    ...draft,
    // A record without an owner (one of an older shape) is still logged, under the instance.
    aggregateId: draft.aggregateId ?? '',
    resourceOwner: draft.resourceOwner ?? '',
    at,
    editor: by.userId,
    service: by.service,
    ...(by.address ? { address: by.address } : {}),
  }));
}

/** What a search of the log asks for (every field narrows it). */
export interface EventQuery {
  /** Events after this sequence number (ascending), or before it (descending). */
  readonly from?: number | undefined;
  readonly limit: number;
  /** Oldest first; newest first otherwise. */
  readonly asc: boolean;
  readonly editor?: string | undefined;
  readonly types?: readonly string[] | undefined;
  readonly aggregateId?: string | undefined;
  readonly aggregateTypes?: readonly string[] | undefined;
  readonly resourceOwner?: string | undefined;
  readonly objectId?: string | undefined;
  /** Written at or after (ms). */
  readonly since?: number | undefined;
  /** Written before (ms). */
  readonly until?: number | undefined;
}

/** Whether a stored event answers a query (the stores without an index for a filter apply this one). */
export function eventMatches(event: ActivityEvent, query: EventQuery): boolean {
  return (
    (query.editor === undefined || event.editor === query.editor) &&
    (query.types === undefined || query.types.length === 0 || query.types.includes(event.type)) &&
    (query.aggregateId === undefined || event.aggregateId === query.aggregateId) &&
    (query.aggregateTypes === undefined || query.aggregateTypes.length === 0 || query.aggregateTypes.includes(event.aggregateType)) &&
    (query.resourceOwner === undefined || event.resourceOwner === query.resourceOwner) &&
    (query.objectId === undefined || event.objectId === query.objectId) &&
    (query.since === undefined || event.at >= query.since) &&
    (query.until === undefined || event.at < query.until)
  );
}

/**
 * At most this many events a search reads past the ones it returns (a filter without an index on
 * LMDB): a search costs a bounded amount whatever the log holds; narrow it by time or sequence to
 * read further back.
 */
export const EVENT_SCAN_LIMIT = 100_000;
