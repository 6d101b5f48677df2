import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { CodePurpose } from '../../actors/user-codes.js';
import type { UserRecord } from '../../model/records.js';
import type { View } from '../../util/readonly.js';
import { changedDetails } from '../../zitadel/details.js';
import { invalidArgument, preconditionFailed, resourceExhausted } from '../../model/errors.js';
import { EMAIL } from '../../domain/human-users.js';
import { readBody } from '../../zitadel/validation.js';
import { enumField } from '../../zitadel/enums.js';
import { apiRoute, ok } from './endpoint.js';
import type { CallerPorts } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UserNotificationsPorts = Pick<Ports, 'orgs' | 'notifications'> & CallerPorts;

/**
 * Mails an administrator asks for on a person's behalf (ZITADEL management v1): a new email
 * verification code, a password reset, a new initialization code. Each takes the right to act on
 * the person (`user.write`), and is bounded like the login's (per person, in the store).
 */
const resetSchema = z.object({ type: enumField(['NOTIFICATION_TYPE_Email', 'NOTIFICATION_TYPE_Sms'] as const) });
const initSchema = z.object({ email: z.string().trim().max(200).refine((v) => v === '' || EMAIL.test(v), 'must be an email address').default('') });

export function userNotificationRoutes(ctx: UserNotificationsPorts): Route[] {
  const send = async (user: View<UserRecord>, purpose: CodePurpose) => {
    const outcome = await ctx.notifications.sendCode(user, purpose);
    if (outcome === 'limited') throw resourceExhausted('USER-M41l5', 'too many codes were mailed to this person in the last hour; try again later');
    if (outcome === 'noEmail') throw preconditionFailed('USER-M41l0', 'the person has no email address');
    return ok({ details: changedDetails(user, user.orgId) });
  };
  const human = (user: View<UserRecord>) => {
    if (!user.human) throw preconditionFailed('USER-Hum4n', 'only people get mail');
    return user;
  };
  return [
    apiRoute(ctx, '/management/v1/users/:userId/email/_resend_verification', {
      POST: (req, caller) => {
        const user = human(caller.requireActOn(req.params[0]!, 'user.write'));
        if (user.human!.email.isEmailVerified) throw preconditionFailed('USER-s4Mq0', 'the email address is already verified (Errors.User.Email.AlreadyVerified)');
        return send(user, 'verifyEmail');
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/password/_reset', {
      POST: (req, caller) => {
        const user = human(caller.requireActOn(req.params[0]!, 'user.write'));
        if (readBody(req, resetSchema).type === 'NOTIFICATION_TYPE_Sms') throw invalidArgument('USER-Sms01', 'type NOTIFICATION_TYPE_Sms is not supported: Sesame sends mail only');
        if (user.state === 'USER_STATE_INITIAL') throw preconditionFailed('USER-Init0', 'the person is not initialized yet: send an initialization code (…/_resend_initialization)');
        return send(user, 'passwordReset');
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/_resend_initialization', {
      POST: (req, caller) => {
        const user = human(caller.requireActOn(req.params[0]!, 'user.write'));
        if (user.state !== 'USER_STATE_INITIAL') throw preconditionFailed('USER-Gr8ao', 'the person is already initialized (Errors.User.AlreadyInitialised)');
        // Changing the address on the way (ZITADEL's `email`) is not offered: change it first.
        if (readBody(req, initSchema).email) throw invalidArgument('USER-Em41l', 'email is not supported here: change the person\'s email first, then resend the initialization');
        return send(user, 'init');
      },
    }),
  ];
}
