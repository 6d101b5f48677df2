import { z } from 'zod';
import type { ActivityEvent, EventQuery } from '../model/activity.js';
import { rfc3339 } from './details.js';
import { list, text, timestamp, uint64 } from './validation.js';

/** The most events one search answers (ZITADEL's default page). */
export const MAX_EVENTS = 1000;
const DEFAULT_LIMIT = 100;

const limit = () =>
  z
    .number()
    .int()
    .min(0)
    .max(MAX_EVENTS, `at most ${MAX_EVENTS} events a search`)
    .default(0)
    .transform((n) => (n === 0 ? DEFAULT_LIMIT : n));

/**
 * ListEventsRequest: `sequence` (after it ascending, before it descending), the filters,
 * `creationDate` / `from` / `range` for time.
 *
 * This module is ZITADEL's event API over Sesame's activity log (model/activity.ts): the admin
 * API's ListEvents (`POST /admin/v1/events/_search`) and the management API's per-object changes
 * (`POST /management/v1/{users/{id},orgs/me,projects/{id},projects/{id}/apps/{id}}/changes/_search`),
 * their requests and answers in ZITADEL's protojson shapes.
 */
export const listEventsSchema = z.object({
  sequence: uint64(),
  limit: limit(),
  asc: z.boolean().default(false),
  editorUserId: text(200),
  eventTypes: list(z.string().max(200)).refine((types) => types.length <= 100, 'at most 100 event types'),
  aggregateId: text(200),
  aggregateTypes: list(z.string().max(200)).refine((types) => types.length <= 100, 'at most 100 aggregate types'),
  resourceOwner: text(200),
  creationDate: timestamp().optional(),
  from: timestamp().optional(),
  range: z.object({ since: timestamp().optional(), until: timestamp().optional() }).optional(),
});

export function eventQueryOf(input: z.output<typeof listEventsSchema>): EventQuery {
  const since = input.range?.since ?? input.from ?? input.creationDate;
  return {
    ...(input.sequence > 0 ? { from: input.sequence } : {}),
    limit: input.limit,
    asc: input.asc,
    ...(input.editorUserId ? { editor: input.editorUserId } : {}),
    ...(input.eventTypes.length > 0 ? { types: input.eventTypes } : {}),
    ...(input.aggregateId ? { aggregateId: input.aggregateId } : {}),
    ...(input.aggregateTypes.length > 0 ? { aggregateTypes: input.aggregateTypes } : {}),
    ...(input.resourceOwner ? { resourceOwner: input.resourceOwner } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(input.range?.until !== undefined ? { until: input.range.until } : {}),
  };
}

/** ListUserChangesRequest and its kin: `{ query: { sequence, limit, asc } }`. */
export const listChangesSchema = z.object({
  query: z.object({ sequence: uint64(), limit: limit(), asc: z.boolean().default(false) }).default({ sequence: 0, limit: DEFAULT_LIMIT, asc: false }),
});

/** Who an editor is, as the answers name them. */
export interface EditorView {
  displayName: string;
  preferredLoginName: string;
}

/** A readable name of an event type (`user.human.password.changed` → "User human password changed"). */
export function describeType(type: string): string {
  const words = type.replace(/[._]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const localized = (prefix: string, type: string) => ({ key: `${prefix}.${type}`, localizedMessage: describeType(type) });

/** An event as ListEvents answers it; `editor.address` is Sesame's (where the change came from). */
export function eventView(event: ActivityEvent, editor: EditorView | undefined) {
  return {
    editor: { userId: event.editor, displayName: editor?.displayName ?? '', service: event.service, ...(event.address ? { address: event.address } : {}) },
    aggregate: { id: event.aggregateId, type: { type: event.aggregateType, localized: localized('AggregateTypes', event.aggregateType) }, resourceOwner: event.resourceOwner },
    sequence: String(event.seq),
    creationDate: rfc3339(event.at),
    payload: event.payload ?? {},
    type: { type: event.type, localized: localized('EventTypes', event.type) },
  };
}

/** An event as the changes searches answer it (ZITADEL's Change). */
export function changeView(event: ActivityEvent, editor: EditorView | undefined) {
  return {
    changeDate: rfc3339(event.at),
    eventType: localized('EventTypes', event.type),
    sequence: String(event.seq),
    editorId: event.editor,
    editorDisplayName: editor?.displayName ?? '',
    resourceOwnerId: event.resourceOwner,
    editorPreferredLoginName: editor?.preferredLoginName ?? '',
    editorAvatarUrl: '',
  };
}
