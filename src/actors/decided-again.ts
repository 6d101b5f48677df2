import { WriteConflict } from '../model/errors.js';

/** Tries per change: a change that keeps meeting newer ones (a burst on one record) is refused after these. */
const MOST_TRIES = 8;

/**
 * A change decided on this thread's copy of the directory, decided again when the store refused it
 * because another thread's (or process's) change to the same record came first (WriteConflict):
 * `retake(key)` reads that record again as stored into the copy, and `attempt` runs anew on it,
 * up to a few times. Optimistic concurrency: no thread waits for another, and two changes to one
 * record (two roles added to a project at once) both land, one after the other.
 */
export async function decidedAgain<T>(attempt: () => Promise<T>, retake: (key: string) => void): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof WriteConflict) || tries >= MOST_TRIES) throw error;
      retake(error.key);
    }
  }
}
