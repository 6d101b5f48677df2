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
  return viewWith<T>(actor, { editor } as Partial<T>);
}

/**
 * The same object with some fields of its own (who acts, from where): its methods run on it, its
 * state is the object's. Frozen, so a method that assigned a field throws instead of leaving the
 * assignment on the view.
 */
export function viewWith<T extends object>(target: T, own: Partial<T>): T {
  const view = Object.create(target) as T;
  for (const [name, value] of Object.entries(own)) Object.defineProperty(view, name, { value });
  return Object.freeze(view);
}
