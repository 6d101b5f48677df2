import { z } from 'zod';
import { emailSchema, phoneSchema } from '../../zitadel/users.js';
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
import { flag, text } from '../../zitadel/validation.js';
import { fillPlaceholders } from '../../zitadel/message-texts.js';
import { MAX_PASSWORD } from '../../domain/human-users.js';
import { requireComplexPassword } from '../../domain/password-complexity.js';
import type { SessionEndPorts } from '../../services/session-end.js';
import { afterNewPassword, setPasswordWithCode } from '../../services/new-password.js';
import type { CallerPorts } from './caller.js';
import { changeEmail, verifyEmailWithCode } from '../../services/email-change.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UserNotificationsPorts = Pick<Ports, 'orgs' | 'notifications' | 'userCodes' | 'loginDirectory' | 'pool'> & SessionEndPorts & CallerPorts;

const requiredPhoneSchema = phoneSchema.refine((p) => p.phone !== '', { message: 'must not be empty (RemoveHumanPhone removes a number)', path: ['phone'] });
const resetSchema = z.object({ type: enumField(['NOTIFICATION_TYPE_Email', 'NOTIFICATION_TYPE_Sms'] as const) });
const initSchema = z.object({
  email: z
    .string()
    .trim()
    .max(200)
    .refine((v) => v === '' || EMAIL.test(v), 'must be an email address')
    .default(''),
});

/** A link template of user v2 (`{{.UserID}}`, `{{.Code}}`, `{{.OrgID}}`, `{{.LoginName}}`): an http(s) URL once filled. */
const urlTemplate = () =>
  text(2000).refine(
    (t) =>
      t === '' ||
      /^https?:$/.test(
        URL.canParse(fillPlaceholders(t, { UserID: 'u', Code: 'c', OrgID: 'o', LoginName: 'l' })) ? new URL(fillPlaceholders(t, { UserID: 'u', Code: 'c', OrgID: 'o', LoginName: 'l' })).protocol : '',
      ),
    'must be an http(s) URL template',
  );
const v2DeliverySchema = z.object({
  sendLink: z.object({ notificationType: enumField(['NOTIFICATION_TYPE_Unspecified', 'NOTIFICATION_TYPE_Email', 'NOTIFICATION_TYPE_SMS'] as const), urlTemplate: urlTemplate() }).optional(),
  sendCode: z.object({ urlTemplate: urlTemplate() }).optional(),
  returnCode: z.object({}).optional(),
});
const verifySchema = z.object({ verificationCode: z.string().trim().min(1).max(20) });
const setPasswordSchema = z.object({
  newPassword: z.object({ password: z.string().min(1).max(MAX_PASSWORD), changeRequired: flag() }),
  verificationCode: z.string().trim().max(20).default(''),
  currentPassword: z.string().max(MAX_PASSWORD).default(''),
});

/**
 * Mails an administrator asks for on a person's behalf (ZITADEL management v1): a new email
 * verification code, a password reset, a new initialization code; and the address and phone
 * number an administrator changes (UpdateHumanEmail, UpdateHumanPhone, RemoveHumanPhone). Each takes the right to act on
 * the person (`user.write`), and is bounded like the login's (per person, in the store). User v2's
 * recovery calls too: a reset or a verification mailed (Sesame's link or the caller's `urlTemplate`) or
 * its code returned (`returnCode`), the address verified with the code, a password set with it.
 */
export function userNotificationRoutes(ctx: UserNotificationsPorts): Route[] {
  const send = async (user: View<UserRecord>, purpose: CodePurpose, options: { urlTemplate?: string; returnCode?: boolean } = {}) => {
    const sent = await ctx.notifications.sendCode(user, purpose, options);
    if (sent.outcome === 'limited') throw resourceExhausted('USER-M41l5', 'too many codes were mailed to this person in the last hour; try again later');
    if (sent.outcome === 'noEmail') throw preconditionFailed('USER-M41l0', 'the person has no email address');
    return ok({ details: changedDetails(user, user.orgId), verificationCode: 'code' in sent ? sent.code : undefined });
  };
  /** User v2's choice: a mail (Sesame's link, or the caller's `urlTemplate`), or the code returned to the caller. */
  const delivery = (input: z.output<typeof v2DeliverySchema>) => {
    const link = input.sendLink ?? input.sendCode;
    if (input.sendLink?.notificationType === 'NOTIFICATION_TYPE_SMS') throw invalidArgument('USER-Sms01', 'notificationType NOTIFICATION_TYPE_SMS is not supported: Sesame sends mail only');
    return { ...(link?.urlTemplate ? { urlTemplate: link.urlTemplate } : {}), returnCode: input.returnCode !== undefined };
  };
  const human = (user: View<UserRecord>) => {
    if (!user.human) throw preconditionFailed('USER-Hum4n', 'only people get mail');
    return user;
  };
  const changedAnswer = (changed: View<UserRecord>) => ok({ details: changedDetails(changed, changed.orgId) });
  const wrongCode = () => invalidArgument('USER-Code1', 'the code is wrong or has expired (Errors.User.Code.Invalid)');
  return [
    apiRoute(ctx, '/v2/users/:userId/password_reset', {
      POST: (req, caller) => {
        const user = human(caller.requireActOn(req.params[0]!, 'user.write'));
        return send(user, 'passwordReset', delivery(readBody(req, v2DeliverySchema)));
      },
    }),
    apiRoute(ctx, '/v2/users/:userId/email/resend', {
      POST: (req, caller) => {
        const user = human(caller.requireActOn(req.params[0]!, 'user.write'));
        if (user.human!.email.isEmailVerified) throw preconditionFailed('USER-s4Mq0', 'the email address is already verified (Errors.User.Email.AlreadyVerified)');
        return send(user, 'verifyEmail', delivery(readBody(req, v2DeliverySchema)));
      },
    }),
    apiRoute(ctx, '/v2/users/:userId/email/verify', {
      POST: async (req, caller) => {
        const user = human(caller.requireActOn(req.params[0]!, 'user.write'));
        const { verificationCode } = readBody(req, verifySchema);
        const verified = await verifyEmailWithCode(ctx, caller.by, user.id, verificationCode);
        if (!verified) throw wrongCode();
        return ok({ details: changedDetails(verified, verified.orgId) });
      },
    }),
    apiRoute(ctx, '/v2/users/:userId/password', {
      POST: async (req, caller) => {
        const user = human(caller.requireActOn(req.params[0]!, 'user.write'));
        const input = readBody(req, setPasswordSchema);
        if (input.currentPassword)
          throw invalidArgument('USER-Cur01', 'currentPassword is not supported here: a person changes their own password at the login; give verificationCode, or neither as an administrator');
        requireComplexPassword(input.newPassword.password, ctx.orgs.policy('passwordComplexity', user.orgId).policy);
        if (input.verificationCode) {
          // A code from …/password_reset: the person's own choice, no change required after it.
          const changed = await setPasswordWithCode(ctx, user.id, 'passwordReset', input.verificationCode, input.newPassword.password, ctx.loginDirectory.from(caller.by.address, caller.by));
          if (!changed) throw wrongCode();
          return ok({ details: changedDetails(changed, changed.orgId) });
        }
        const changed = await ctx.orgs.by(caller.by).setPassword(user.id, user.orgId, await ctx.pool.hashPassword(input.newPassword.password), input.newPassword.changeRequired);
        await afterNewPassword(ctx, changed);
        return ok({ details: changedDetails(changed, changed.orgId) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/email', {
      // UpdateHumanEmail: not verified, the person's next sign-in asks for the code mailed to the new address.
      PUT: async (req, caller) => {
        const target = caller.requireActOn(req.params[0]!, 'user.write');
        return changedAnswer((await changeEmail(ctx, caller.by, target.id, readBody(req, emailSchema))).user);
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/phone', {
      // UpdateHumanPhone and RemoveHumanPhone (the actor refuses machine users). Sesame sends no SMS: a number is verified only as the caller says.
      PUT: async (req, caller) => {
        const target = caller.requireActOn(req.params[0]!, 'user.write');
        return changedAnswer(await ctx.orgs.by(caller.by).changePhone(target.id, readBody(req, requiredPhoneSchema)));
      },
      DELETE: async (req, caller) => changedAnswer(await ctx.orgs.by(caller.by).changePhone(caller.requireActOn(req.params[0]!, 'user.write').id, undefined)),
    }),
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
        if (readBody(req, initSchema).email) throw invalidArgument('USER-Em41l', "email is not supported here: change the person's email first, then resend the initialization");
        return send(user, 'init');
      },
    }),
  ];
}
