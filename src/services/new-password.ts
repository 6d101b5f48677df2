import type { LoginDirectory } from './login-directory.js';
import type { UserRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';
import { clock } from '../util/clock.js';
import type { FlowView } from './ports.js';
import { endSessionsOfUser, type SessionEndPorts } from './session-end.js';

/** What this module uses of the wired parts (src/app.ts). */
export type NewPasswordPorts = Pick<FlowView, 'notifications' | 'userCodes' | 'loginDirectory'> & SessionEndPorts;

/**
 * What follows a new password, whoever set it (the person at the login, with a mailed code, an
 * administrator): the browser sessions the old one opened end (their tokens revoked, their apps
 * told), and the person hears of it when the notification policy says so. The revocation horizon
 * the new password moved already voids the rest.
 */
export async function afterNewPassword(ctx: Pick<NewPasswordPorts, 'notifications'> & SessionEndPorts, user: View<UserRecord>): Promise<void> {
  await Promise.all([endSessionsOfUser(ctx, user.id), ctx.notifications.passwordChanged(user)]);
}

/**
 * A password set with a mailed code (a reset, or an initialization, which also verifies the address
 * the code went to): the code is used once; undefined when it is wrong, expired or used.
 */
export async function setPasswordWithCode(
  ctx: NewPasswordPorts,
  userId: string,
  purpose: 'passwordReset' | 'init',
  code: string,
  password: string,
  /** The login's decisions for this client (LoginDirectory.from): who the change is logged as, from where. */
  directory: LoginDirectory,
): Promise<View<UserRecord> | undefined> {
  const redeemed = await ctx.userCodes.redeem(userId, purpose, code, clock.now());
  if (redeemed.result !== 'ok') return undefined;
  const changed = await directory.setPasswordByCode(userId, password, purpose === 'init' ? redeemed.subject : undefined);
  await afterNewPassword(ctx, changed);
  return changed;
}
