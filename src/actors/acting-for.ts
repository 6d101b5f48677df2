import type { Editor } from '../model/activity.js';

/**
 * An actor acting for an editor: the same actor (its tables, caches and indexes), its changes
 * written as `editor`'s in the activity log (model/activity.ts), as ZITADEL's commands take the
 * caller from their context. The view is frozen: a method that assigned a field of the actor would
 * throw here rather than leave the assignment on the view.
 */
export interface ActsFor {
  /** Who the changes are by; undefined on the actor itself (Sesame's own work). */
  readonly editor: Editor | undefined;
}

export function actingFor<T extends ActsFor>(actor: T, editor: Editor): T {
  return Object.freeze(Object.create(actor, { editor: { value: editor } })) as T;
}
