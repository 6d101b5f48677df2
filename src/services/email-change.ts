import type { CodePurpose } from '../actors/user-codes.js';
import type { Editor } from '../model/activity.js';
import type { HumanData, UserRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';
import type { Ports } from './ports.js';
import { clock } from '../util/clock.js';

/** What this module uses of the wired parts (src/app.ts). */
export type EmailChangePorts = Pick<Ports, 'orgs' | 'userCodes'>;
/** What verifyEmailWithCode uses. */
export type EmailVerificationPorts = Pick<Ports, 'userCodes' | 'loginDirectory'>;

/** Every code Sesame mails to a person's address. */
const MAILED_CODES: readonly CodePurpose[] = ['verifyEmail', 'passwordReset', 'init', 'otpEmail', 'passwordless'];

/**
 * A code mailed to verify the address (VerifyMyEmail, user v2's verify), used once: the person as
 * stored, verified, if the code was mailed to the address they still have; undefined otherwise.
 */
export async function verifyEmailWithCode(ctx: EmailVerificationPorts, by: Editor, userId: string, code: string): Promise<View<UserRecord> | undefined> {
  const redeemed = await ctx.userCodes.redeem(userId, 'verifyEmail', code, clock.now());
  return redeemed.result === 'ok' ? ctx.loginDirectory.from(by.address, by).verifyEmail(userId, redeemed.subject) : undefined;
}

/**
 * A person's address changed, by an administrator (UpdateHumanEmail) or by themselves (SetMyEmail):
 * whoever reads the old mailbox keeps none of what was mailed there. Resets, initializations,
 * passkey links and sign-in codes die with the address. Whether it moved is decided on the stored
 * row (another letter case is the same mailbox).
 */
export async function changeEmail(ctx: EmailChangePorts, by: Editor, userId: string, email: HumanData['email']): Promise<{ user: View<UserRecord>; moved: boolean }> {
  const changed = await ctx.orgs.by(by).changeEmail(userId, email);
  if (changed.moved) await Promise.all(MAILED_CODES.map((purpose) => ctx.userCodes.void(changed.user.id, purpose)));
  return changed;
}
