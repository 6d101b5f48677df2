import { z } from 'zod';
import type { Route } from '../types.js';
import type { Ports } from '../../services/ports.js';
import { afterNewPassword } from '../../services/new-password.js';
import type { SessionEndPorts } from '../../services/session-end.js';
import { requireComplexPassword } from '../../domain/password-complexity.js';
import { MAX_PASSWORD } from '../../domain/human-users.js';
import { invalidArgument, preconditionFailed, resourceExhausted } from '../../model/errors.js';
import { changeEmail, verifyEmailWithCode, type EmailChangePorts } from '../../services/email-change.js';
import { emailSchema, phoneSchema } from '../../zitadel/users.js';
import { phoneDigits } from '../../model/phone.js';
import { changedDetails, rfc3339 } from '../../zitadel/details.js';
import { requireRecentSignIn, type Caller } from './caller.js';
import type { MemberRecord } from '../../model/records.js';
import type { View } from '../../util/readonly.js';
import { listDetails, viewDetails } from '../../zitadel/details.js';
import { listQuerySchema, pageOf } from '../../zitadel/list-query.js';
import { readBody } from '../../zitadel/validation.js';
import { apiRoute, ok } from './endpoint.js';
import { userView, type UsersPorts } from './users.js';

/** What this module uses of the wired parts (src/app.ts). */
export type MyUserPorts = UsersPorts & SessionEndPorts & EmailChangePorts & Pick<Ports, 'loginDirectory' | 'pool' | 'notifications'>;

/**
 * ZITADEL's auth API about the caller itself: GetMyUser (`GET /auth/v1/users/me`),
 * ListMyMemberships (`POST /auth/v1/memberships/me/_search`, the roles the caller administers
 * with: the console shows what they may do), UpdateMyPassword (`PUT /auth/v1/users/me/password`,
 * the old password checked as the login checks it: one check at a time, counted against the
 * lockout policy), ListMyUserSessions (`POST /auth/v1/users/me/sessions/_search`: every browser
 * session of the person, not only this browser's; one ends with v2's DeleteSession, in sessions.ts).
 * Whoever is authenticated may act on themselves.
 *
 * SetMyEmail (`PUT /auth/v1/users/me/email` `{email}`), SetMyPhone (`PUT …/me/phone` `{phone}`) and
 * RemoveMyPhone (`DELETE …/me/phone`) change where the person's recovery goes: they take a token of
 * a sign-in within the last minutes (domain/recent-sign-in.ts; the console asks for one). The new
 * address or number is unverified: the address gets a code at once (VerifyMyEmail,
 * `POST …/me/email/_verify` `{code}`; ResendMyEmailVerification, `…/_resend_verification`), and
 * every code mailed to the old one dies (services/email-change.ts). Sesame sends no SMS: a number a
 * person sets stays unverified, and signs nobody in.
 */
const listMembershipsSchema = z.object({ query: listQuerySchema, queries: z.array(z.unknown()).max(0, 'membership queries are not supported by Sesame: ask for all of them').default([]) }).strict();
const setMyEmailSchema = z.object({ email: emailSchema.shape.email }).strict();
const setMyPhoneSchema = z.object({ phone: phoneSchema.shape.phone.refine((p) => p !== '', 'must not be empty (RemoveMyPhone removes a number)') }).strict();
const verifyMyEmailSchema = z.object({ code: z.string().trim().min(1).max(20) });
const updatePasswordSchema = z.object({ oldPassword: z.string().max(MAX_PASSWORD).default(''), newPassword: z.string().min(1, 'must not be empty').max(MAX_PASSWORD) });

/** The caller as a person: the password and sessions are people's (a machine user has neither). */
function requirePerson(caller: Caller) {
  if (!caller.user.human) throw preconditionFailed('USER-Hum4n', 'only people have a password and browser sessions');
  return caller.user;
}

/** A membership as ZITADEL's auth API answers it: the scope as `iam`, `orgId` or `projectId`. */
function membershipView(ctx: MyUserPorts, member: View<MemberRecord>) {
  const base = { userId: member.userId, roles: member.roles };
  if (member.scope === 'instance') return { ...base, details: viewDetails(member, undefined), iam: true, displayName: 'instance' };
  if (member.scope.startsWith('org:')) {
    const orgId = member.scope.slice('org:'.length);
    return { ...base, details: viewDetails(member, orgId), orgId, displayName: ctx.orgs.getOrg(orgId)?.name ?? orgId };
  }
  const projectId = member.scope.slice('project:'.length);
  const project = ctx.orgs.getProject(projectId);
  return { ...base, details: viewDetails(member, project?.orgId), projectId, orgId: project?.orgId, displayName: project?.name ?? projectId };
}

export function myUserRoutes(ctx: MyUserPorts): Route[] {
  return [
    apiRoute(ctx, '/auth/v1/users/me', {
      GET: (_req, caller) => ok({ user: userView(ctx, caller.user) }),
    }),
    apiRoute(ctx, '/auth/v1/users/me/password', {
      PUT: async (req, caller) => {
        const user = requirePerson(caller);
        const input = readBody(req, updatePasswordSchema);
        const check = await ctx.loginDirectory.from(req.peer, caller.by).checkPassword(user.id, input.oldPassword);
        if (check.result === 'locked') throw preconditionFailed('USER-L0ck3', 'the account is locked');
        if (check.result !== 'passed') throw invalidArgument('USER-3M0fs', 'the old password is wrong (Errors.User.Password.Invalid)');
        requireComplexPassword(input.newPassword, ctx.orgs.policy('passwordComplexity', user.orgId).policy);
        const hash = await ctx.pool.hashPassword(input.newPassword);
        const changed = await ctx.orgs.by(caller.by).setPassword(user.id, user.orgId, hash, false);
        // Every session the old password opened ends, this one's tokens too: sign in again with the new one.
        await afterNewPassword(ctx, changed);
        return ok({ details: changedDetails(changed, changed.orgId) });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/email', {
      PUT: async (req, caller) => {
        const user = requirePerson(caller);
        requireRecentSignIn(caller, 'changing your email address');
        const { email } = readBody(req, setMyEmailSchema);
        // The address one has (another letter case is the same mailbox) stays as it is, verified or not.
        if (email.toLowerCase() === user.human!.email.email.toLowerCase()) throw preconditionFailed('USER-Em41N', 'the email address is the one you have (Errors.User.Email.NotChanged)');
        const { user: changed } = await changeEmail(ctx, caller.by, user.id, { email, isEmailVerified: false });
        // The code to verify it goes to the new address at once; one bounded away (too many this hour) is asked for again later.
        await ctx.notifications.sendCode(changed, 'verifyEmail');
        return ok({ details: changedDetails(changed, changed.orgId) });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/email/_verify', {
      POST: async (req, caller) => {
        const user = requirePerson(caller);
        const { code } = readBody(req, verifyMyEmailSchema);
        const verified = await verifyEmailWithCode(ctx, caller.by, user.id, code);
        if (!verified) throw invalidArgument('USER-Code1', 'the code is wrong or has expired (Errors.User.Code.Invalid)');
        return ok({ details: changedDetails(verified, verified.orgId) });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/email/_resend_verification', {
      POST: async (_req, caller) => {
        const user = requirePerson(caller);
        if (user.human!.email.isEmailVerified) throw preconditionFailed('USER-s4Mq0', 'the email address is already verified (Errors.User.Email.AlreadyVerified)');
        const sent = await ctx.notifications.sendCode(user, 'verifyEmail');
        if (sent.outcome === 'limited') throw resourceExhausted('USER-M41l5', 'too many codes were mailed to you in the last hour; try again later');
        return ok({ details: changedDetails(user, user.orgId) });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/phone', {
      PUT: async (req, caller) => {
        const user = requirePerson(caller);
        requireRecentSignIn(caller, 'changing your phone number');
        const { phone } = readBody(req, setMyPhoneSchema);
        if (user.human!.phone && phoneDigits(phone) === phoneDigits(user.human!.phone.phone))
          throw preconditionFailed('USER-Ph0nN', 'the phone number is the one you have (Errors.User.Phone.NotChanged)');
        const changed = await ctx.orgs.by(caller.by).changePhone(user.id, { phone, isPhoneVerified: false });
        return ok({ details: changedDetails(changed, changed.orgId) });
      },
      DELETE: async (_req, caller) => {
        const user = requirePerson(caller);
        requireRecentSignIn(caller, 'removing your phone number');
        const changed = await ctx.orgs.by(caller.by).changePhone(user.id, undefined);
        return ok({ details: changedDetails(changed, changed.orgId) });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/sessions/_search', {
      POST: async (_req, caller) => {
        const user = requirePerson(caller);
        const sessions = (await ctx.userSessions.ofUser(user.id)).sort((a, b) => b.lastActiveAt - a.lastActiveAt);
        const loginName = ctx.orgs.preferredLoginName(user);
        return ok({
          details: listDetails(sessions.length),
          result: sessions.map((s) => ({
            sessionId: s.id,
            agentId: s.agentId,
            authState: 'SESSION_STATE_ACTIVE',
            userId: user.id,
            userName: user.userName,
            loginName,
            displayName: user.human?.profile.displayName ?? '',
            authTime: rfc3339(s.authTime * 1000),
            details: { creationDate: rfc3339(s.createdAt), changeDate: rfc3339(s.lastActiveAt), resourceOwner: user.orgId },
          })),
        });
      },
    }),
    apiRoute(ctx, '/auth/v1/memberships/me/_search', {
      POST: (req, caller) => {
        const { query } = readBody(req, listMembershipsSchema);
        const memberships = ctx.orgs.memberships(caller.user.id);
        return ok({ details: listDetails(memberships.length), result: pageOf(memberships, query).map((m) => membershipView(ctx, m)) });
      },
    }),
  ];
}
