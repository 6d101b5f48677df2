import type { UserRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';
import { clock } from '../util/clock.js';

/**
 * A user's revocation horizon (UserRecord.revokedBefore): what began before it is void — access
 * tokens (by `auth_time`, else `iat`), refresh families and ID tokens (by `auth_time`), browser
 * sessions and pending sign-ins (by their checks). Checked wherever one of them is used, on every
 * thread (each reads the user record, which the directory copies carry).
 *
 * Tokens carry whole seconds, so the horizon's own second is void as a whole: a token minted a
 * moment before a secret was set or a lock dies with the rest (whoever mints tokens in a loop with a
 * stolen secret keeps none). What begins at or after the horizon but within its second counts from
 * the next second instead (beginningAt), so a sign-in or a token right after a reset is kept.
 */
export function horizonSeconds(user: View<UserRecord>): number {
  return user.revokedBefore === undefined ? -Infinity : Math.floor(user.revokedBefore / 1000);
}

/** Whether something the user began at `originSeconds` (Unix seconds) is void; nothing to compare (undefined): not void. */
export function predatesHorizon(user: View<UserRecord>, originSeconds: number | undefined): boolean {
  return originSeconds !== undefined && originSeconds <= horizonSeconds(user);
}

/**
 * The origin (Unix seconds) of a check, sign-in or token the user begins now: the current second,
 * or the one after the horizon's when that is the current one (see above). `now` must not be
 * earlier than the horizon, as it is for anything begun after the change that set it.
 */
export function beginningAt(user: View<UserRecord> | undefined, nowMs = clock.now()): number {
  const seconds = Math.floor(nowMs / 1000);
  return user !== undefined && seconds <= horizonSeconds(user) ? horizonSeconds(user) + 1 : seconds;
}
