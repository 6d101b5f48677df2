import type { Route } from '../types.js';
import type { Ports } from '../../services/ports.js';
import { endSessionsOfUser, type SessionEndPorts } from '../../services/session-end.js';
import { requirePasskeysAllowed } from '../../domain/sign-in-policy.js';
import { invalidArgument, preconditionFailed, resourceExhausted } from '../../model/errors.js';
import { z } from 'zod';
import { enrollableFactors } from '../../domain/sign-in-policy.js';
import { OTP_SECOND_FACTOR, U2F_SECOND_FACTOR } from '../../model/records.js';
import { WebAuthn } from '../../services/webauthn.js';
import { clock } from '../../util/clock.js';
import { newTotpSecret, otpauthUri, verifyTotp } from '../../crypto/totp.js';
import { openOtpSecret, sealOtpSecret } from '../../crypto/otp-secret.js';
import { readBody } from '../../zitadel/validation.js';
import { changedDetails, listDetails } from '../../zitadel/details.js';
import type { UserRecord } from '../../model/records.js';
import type { View } from '../../util/readonly.js';
import { apiRoute, ok } from './endpoint.js';
import { requireRecentSignIn, type Caller, type CallerPorts } from './caller.js';
import { passkeyViews, secondFactorViews } from './user-factors.js';
import { idpLinkView } from './idps.js';

/** What this module uses of the wired parts (src/app.ts). */
export type MyFactorsPorts = Pick<Ports, 'orgs' | 'idps' | 'notifications' | 'masterKey' | 'issuer' | 'loginSecurity' | 'pendingRegistrations'> & SessionEndPorts & CallerPorts;

/**
 * ZITADEL's auth API on the caller's own factors and links: ListMyAuthFactors, AddMyAuthFactorOTP,
 * VerifyMyAuthFactorOTP, AddMyAuthFactorU2F, VerifyMyAuthFactorU2F, RemoveMyAuthFactorOTP,
 * RemoveMyAuthFactorOTPEmail, RemoveMyAuthFactorU2F, ListMyPasswordless, RemoveMyPasswordless,
 * SendMyPasswordlessLink (a link to register a passkey, mailed to the verified address, as the
 * management API's), ListMyLinkedIDPs and RemoveMyLinkedIDP. Each removal ends the person's
 * sessions (what they guarded is weaker now), this one's token with them, as when an administrator
 * removes it. The person as stored decides, not the caller's copy.
 *
 * Adding a factor (AddMyAuthFactorOTP, AddMyAuthFactorU2F) takes a sign-in of the last minutes
 * (caller.ts requireRecentSignIn): a stolen token that could bind its holder's authenticator to
 * the person would outlast the token. A security key's registration options go out as ZITADEL's
 * `key.publicKey` (the WebAuthn creation options, JSON, base64); the challenge waits in the store
 * (actors/pending-registrations.ts) and the answer, VerifyMyAuthFactorU2F's
 * `verification.publicKeyCredential`, is checked against it once, by @simplewebauthn/server.
 */
const verifyOtpSchema = z.object({ code: z.string().max(20) });
const verifyU2fSchema = z.object({
  verification: z.object({ publicKeyCredential: z.record(z.string(), z.unknown()), tokenName: z.string().trim().max(100).default('') }),
});

/** Whether two sealed values are the same bytes (both absent counts as different: nothing waits). */
function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function person(caller: Caller): View<UserRecord> {
  if (!caller.user.human) throw preconditionFailed('USER-Hum4n', 'only people have second factors, passkeys and linked accounts');
  return caller.user;
}

export function myFactorRoutes(ctx: MyFactorsPorts): Route[] {
  const webauthn = new WebAuthn(ctx.issuer);
  /** Security keys are enrolled only where the person's org's login policy offers them (checked at the start and at the answer). */
  const requireU2fOffered = (user: View<UserRecord>) => {
    if (!enrollableFactors(ctx.orgs.policy('login', user.orgId).policy).includes(U2F_SECOND_FACTOR)) {
      throw preconditionFailed('USER-U2f0p', "the organization's login policy does not offer security keys (U2F) as a second factor");
    }
  };
  /** TOTP is enrolled only where the person's org's login policy offers it (checked at the key and at the code). */
  const requireTotpOffered = (user: View<UserRecord>) => {
    if (!enrollableFactors(ctx.orgs.policy('login', user.orgId).policy).includes(OTP_SECOND_FACTOR)) {
      throw preconditionFailed('USER-Otp0p', "the organization's login policy does not offer TOTP as a second factor");
    }
  };
  /** A change to the caller's own factors, then the end of their sessions. */
  const removing = async (caller: Caller, change: (userId: string) => Promise<View<UserRecord> | undefined>) => {
    const user = person(caller);
    const changed = (await change(user.id)) ?? user;
    await endSessionsOfUser(ctx, user.id);
    return ok({ details: changedDetails(changed, changed.orgId) });
  };
  return [
    apiRoute(ctx, '/auth/v1/users/me/auth_factors/_search', {
      POST: (_req, caller) => ok({ result: secondFactorViews(person(caller)) }),
    }),
    apiRoute(ctx, '/auth/v1/users/me/auth_factors/otp', {
      // AddMyAuthFactorOTP: the secret is handed to the person's app; it counts once a code from it confirms it.
      POST: async (_req, caller) => {
        const user = person(caller);
        requireTotpOffered(user);
        requireRecentSignIn(caller, 'adding an authenticator app');
        const secret = newTotpSecret();
        const updated = await ctx.orgs.by(caller.by).setPendingOtp(user.id, sealOtpSecret(ctx.masterKey, secret));
        return ok({ url: otpauthUri(new URL(ctx.issuer).host, ctx.orgs.preferredLoginName(user), secret), secret, details: changedDetails(updated, updated.orgId) });
      },
      DELETE: (_req, caller) => removing(caller, (id) => ctx.orgs.by(caller.by).removeOtp(id)),
    }),
    apiRoute(ctx, '/auth/v1/users/me/auth_factors/otp/_verify', {
      // VerifyMyAuthFactorOTP. The caller holds the secret already, so a wrong code reveals nothing: no attempt is counted.
      POST: async (req, caller) => {
        const user = person(caller);
        const { code } = readBody(req, verifyOtpSchema);
        const pending = user.human!.otpPendingSealed;
        if (!pending) throw preconditionFailed('USER-Otp1p', 'no TOTP secret waits for a code: add one first (AddMyAuthFactorOTP)');
        requireTotpOffered(user);
        const step = verifyTotp(openOtpSecret(ctx.masterKey, pending), code.replace(/\s+/g, ''));
        // The code is used up, as at the login's enrollment: it cannot pass a sign-in's TOTP step afterwards.
        if (step === undefined || !(await ctx.loginSecurity.useOtpStepForEnrollment(user.id, step))) {
          throw invalidArgument('USER-Otp2c', 'the code is wrong (Errors.User.MFA.OTP.InvalidCode)');
        }
        // The secret the code came from, as stored: one replaced meanwhile (a second AddMyAuthFactorOTP) is not enrolled.
        const enrolled = await ctx.orgs.by(caller.by).enrollOtp(user.id, pending, (stored) => sameBytes(stored.human?.otpPendingSealed, pending));
        if (!enrolled) throw preconditionFailed('USER-Otp3p', 'the TOTP secret was replaced meanwhile: confirm the newest one');
        return ok({ details: changedDetails(enrolled, enrolled.orgId) });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/auth_factors/u2f', {
      POST: async (_req, caller) => {
        const user = person(caller);
        requireU2fOffered(user);
        requireRecentSignIn(caller, 'adding a security key');
        const ceremony = await webauthn.registration(user, ctx.orgs.preferredLoginName(user), 'u2f');
        await ctx.pendingRegistrations.begin(user.id, ceremony.challenge);
        return ok({ key: { publicKey: Buffer.from(JSON.stringify(ceremony.options)).toString('base64') }, details: changedDetails(user, user.orgId) });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/auth_factors/u2f/_verify', {
      POST: async (req, caller) => {
        const user = person(caller);
        const { verification } = readBody(req, verifyU2fSchema);
        requireU2fOffered(user);
        const challenge = await ctx.pendingRegistrations.take(user.id);
        if (!challenge) throw preconditionFailed('USER-U2f1p', 'no security key registration waits for an answer (or it took too long): start one (AddMyAuthFactorU2F)');
        const token = await webauthn.verifyRegistration(verification.publicKeyCredential, challenge, 'u2f', verification.tokenName || 'Security key', clock.now());
        if (!token) throw invalidArgument('USER-U2f2v', 'the security key’s answer does not verify (Errors.User.WebAuthN.ValidateLoginFailed)');
        const added = await ctx.orgs.by(caller.by).addWebAuthnToken(user.id, token, (stored) => ctx.orgs.isActive(stored));
        if (!added) throw preconditionFailed('USER-U2f3p', 'the person is not active');
        return ok({ details: changedDetails(added, added.orgId) });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/auth_factors/otp_email', {
      DELETE: (_req, caller) => removing(caller, (id) => ctx.orgs.by(caller.by).setOtpEmail(id, false)),
    }),
    apiRoute(ctx, '/auth/v1/users/me/auth_factors/u2f/:tokenId', {
      DELETE: (req, caller) => removing(caller, (id) => ctx.orgs.by(caller.by).removeWebAuthnToken(id, req.params[0]!, 'u2f')),
    }),
    apiRoute(ctx, '/auth/v1/users/me/passwordless/_search', {
      POST: (_req, caller) => {
        const result = passkeyViews(person(caller));
        return ok({ details: listDetails(result.length), result });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/passwordless/_send_link', {
      POST: async (_req, caller) => {
        const user = person(caller);
        requirePasskeysAllowed(ctx.orgs.policy('login', user.orgId).policy, 'your organization’s');
        const sent = await ctx.notifications.sendCode(user, 'passwordless', {});
        if (sent.outcome === 'limited') throw resourceExhausted('USER-M41l5', 'too many passkey links were made for you in the last hour; try again later');
        if (sent.outcome === 'noEmail') throw preconditionFailed('USER-M41l0', 'you have no email address');
        return ok({ details: changedDetails(user, user.orgId) });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/passwordless/:tokenId', {
      DELETE: (req, caller) => removing(caller, (id) => ctx.orgs.by(caller.by).removeWebAuthnToken(id, req.params[0]!, 'passwordless')),
    }),
    apiRoute(ctx, '/auth/v1/users/me/idps/_search', {
      POST: (_req, caller) => {
        const user = person(caller);
        const links = user.human?.idpLinks ?? [];
        return ok({ details: listDetails(links.length), result: links.map((link) => idpLinkView(ctx, user, link)) });
      },
    }),
    apiRoute(ctx, '/auth/v1/users/me/linked/idps/:idpId/:linkedUserId', {
      DELETE: (req, caller) => removing(caller, (id) => ctx.orgs.by(caller.by).removeIdpLink(id, req.params[0]!, req.params[1]!)),
    }),
  ];
}
