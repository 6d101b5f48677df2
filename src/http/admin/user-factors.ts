import { requirePasskeysAllowed } from '../../domain/sign-in-policy.js';
import { requireUserAccess } from './users.js';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { changedDetails, listDetails } from '../../zitadel/details.js';
import { preconditionFailed, resourceExhausted } from '../../model/errors.js';
import { CODE_RULES } from '../../services/mail/notifications.js';
import { formatProtoDuration } from '../../util/duration.js';
import { endSessionsOfUser, type SessionEndPorts } from '../../services/session-end.js';
import { apiRoute, ok } from './endpoint.js';
import type { Caller, CallerPorts } from './caller.js';
import type { UserRecord } from '../../model/records.js';
import type { View } from '../../util/readonly.js';

const READY = 'AUTH_FACTOR_STATE_READY';

/** A person's second factors as ListHumanAuthFactors (and ListMyAuthFactors) answer them. */
export function secondFactorViews(user: View<UserRecord>) {
  const h = user.human;
  return [
    ...(h?.otpSecretSealed ? [{ state: READY, otp: {} }] : []),
    ...(h?.otpEmail ? [{ state: READY, otpEmail: {} }] : []),
    ...(h?.webauthn ?? []).filter((t) => t.kind === 'u2f').map((t) => ({ state: READY, u2f: { id: t.tokenId, name: t.name } })),
  ];
}

/** A person's passkeys as ListHumanPasswordless (and ListMyPasswordless) answer them. */
export function passkeyViews(user: View<UserRecord>) {
  return (user.human?.webauthn ?? []).filter((t) => t.kind === 'passwordless').map((t) => ({ id: t.tokenId, state: READY, name: t.name }));
}

/** What this module uses of the wired parts (src/app.ts). */
export type UserFactorsPorts = Pick<Ports, 'orgs' | 'notifications'> & SessionEndPorts & CallerPorts;

/**
 * Codes by email as a person's second factor (ZITADEL user v2 `…/otp_email`; management v1
 * removes it at `…/auth_factors/otp_email`). Adding needs a verified address; both take the right
 * to act on the person. Removing a factor ends the person's sessions, as what it guarded is weaker.
 */
export function userFactorRoutes(ctx: UserFactorsPorts): Route[] {
  const remove = async (caller: Caller, userId: string) => {
    const user = await ctx.orgs.by(caller.by).setOtpEmail(userId, false);
    await endSessionsOfUser(ctx, userId);
    return ok({ details: changedDetails(user!, user!.orgId) });
  };
  return [
    apiRoute(ctx, '/v2/users/:userId/otp_email', {
      POST: async (req, caller) => {
        caller.requireActOn(req.params[0]!, 'user.write');
        const user = await ctx.orgs.by(caller.by).setOtpEmail(req.params[0]!, true);
        return ok({ details: changedDetails(user!, user!.orgId) });
      },
      DELETE: (req, caller) => {
        caller.requireActOn(req.params[0]!, 'user.write');
        return remove(caller, req.params[0]!);
      },
    }),
    // RemoveHumanMultiFactorOTP: an administrator resets a person's TOTP.
    apiRoute(ctx, '/management/v1/users/:userId/auth_factors/otp', {
      DELETE: async (req, caller) => {
        caller.requireActOn(req.params[0]!, 'user.write');
        const user = await ctx.orgs.by(caller.by).removeOtp(req.params[0]!, caller.orgId);
        await endSessionsOfUser(ctx, user.id);
        return ok({ details: changedDetails(user, user.orgId) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/auth_factors/otp_email', {
      DELETE: (req, caller) => {
        caller.requireActOn(req.params[0]!, 'user.write');
        return remove(caller, req.params[0]!);
      },
    }),
    ...webAuthnRoutes(ctx),
  ];
}

/**
 * Passkeys (ZITADEL's passwordless tokens) and security keys (U2F) of a person, management v1:
 * list, remove (ends the person's sessions: what they guarded is gone), the second factors
 * altogether (`…/auth_factors/_search`), and a link to register a passkey: returned
 * (`…/passwordless/_link`) or mailed (`…/passwordless/_send_link`), single use, for an hour.
 */
function webAuthnRoutes(ctx: UserFactorsPorts): Route[] {
  const removeToken = async (caller: Caller, userId: string, tokenId: string, kind: 'passwordless' | 'u2f') => {
    caller.requireActOn(userId, 'user.write');
    const user = await ctx.orgs.by(caller.by).removeWebAuthnToken(userId, tokenId, kind);
    await endSessionsOfUser(ctx, userId);
    return ok({ details: changedDetails(user, user.orgId) });
  };
  const link = async (caller: Caller, userId: string, mail: boolean) => {
    const user = caller.requireActOn(userId, 'user.write');
    if (!user.human) throw preconditionFailed('USER-Hum4n', 'only people have passkeys');
    requirePasskeysAllowed(ctx.orgs.policy('login', user.orgId).policy, "the person's");
    const sent = await ctx.notifications.sendCode(user, 'passwordless', mail ? {} : { returnLink: true });
    if (sent.outcome === 'limited') throw resourceExhausted('USER-M41l5', 'too many passkey links were made for this person in the last hour; try again later');
    if (sent.outcome === 'noEmail') throw preconditionFailed('USER-M41l0', 'the person has no email address');
    return ok({
      details: changedDetails(user, user.orgId),
      link: !mail && 'link' in sent ? sent.link : undefined,
      expiration: mail ? undefined : formatProtoDuration(CODE_RULES.passwordless.lifetimeMs),
    });
  };
  return [
    apiRoute(ctx, '/management/v1/users/:userId/passwordless/_search', {
      POST: (req, caller) => {
        const user = requireUserAccess(ctx, caller, req.params[0]!, 'user.read');
        const result = passkeyViews(user);
        return ok({ details: listDetails(result.length), result });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/passwordless/_link', { POST: (req, caller) => link(caller, req.params[0]!, false) }),
    apiRoute(ctx, '/management/v1/users/:userId/passwordless/_send_link', { POST: (req, caller) => link(caller, req.params[0]!, true) }),
    apiRoute(ctx, '/management/v1/users/:userId/passwordless/:tokenId', { DELETE: (req, caller) => removeToken(caller, req.params[0]!, req.params[1]!, 'passwordless') }),
    apiRoute(ctx, '/management/v1/users/:userId/auth_factors/_search', {
      POST: (req, caller) => {
        return ok({ result: secondFactorViews(requireUserAccess(ctx, caller, req.params[0]!, 'user.read')) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/auth_factors/u2f/:tokenId', { DELETE: (req, caller) => removeToken(caller, req.params[0]!, req.params[1]!, 'u2f') }),
  ];
}
