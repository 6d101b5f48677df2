import type { UserRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

/**
 * A user's revocation horizon (UserRecord.revokedBefore): what began before it is void — access
 * tokens (by `auth_time`, else `iat`), refresh families and ID tokens (by `auth_time`), browser
 * sessions and pending sign-ins (by their password check). Checked wherever one of them is used,
 * on every thread (each reads the user record, which the directory copies carry).
 *
 * To the second: tokens carry whole seconds, so what began in the horizon's own second is kept
 * (a sign-in that completes right after an administrator's reset must work). Whatever began in an
 * earlier second is void.
 */
export function horizonSeconds(user: View<UserRecord>): number {
  return user.revokedBefore === undefined ? 0 : Math.floor(user.revokedBefore / 1000);
}

/** Whether something the user began at `originSeconds` (Unix seconds) is void; nothing to compare (undefined): not void. */
export function predatesHorizon(user: View<UserRecord>, originSeconds: number | undefined): boolean {
  return originSeconds !== undefined && user.revokedBefore !== undefined && originSeconds < horizonSeconds(user);
}
