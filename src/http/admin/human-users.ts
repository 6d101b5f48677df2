import { z } from 'zod';
import { invalidArgument } from '../../model/errors.js';
import type { AppContext } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { HumanData, UserState } from '../../model/records.js';
import { addedDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { enumField, GENDER } from '../../zitadel/enums.js';
import { normalizeOtpSecret, sealOtpSecret } from '../../domain/otp-secret.js';
import { checkEncodedHash } from '../../domain/password-hashes.js';
import { flag, list, readBody, requiredText, text } from '../../zitadel/validation.js';

/**
 * Human users: AddHumanUser and ImportHumanUser. Plaintext passwords are hashed in the worker
 * pool and never stored; imported hashes are stored as given once their format is recognized.
 */
// ZITADEL's EmailRegex (HTML5 style).
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/;
/** Hashing cost grows with length; nobody types more than this. */
const MAX_PASSWORD = 1024;

const profileSchema = z.object({
  firstName: requiredText(200),
  lastName: requiredText(200),
  nickName: text(200),
  displayName: text(200),
  preferredLanguage: text(10).refine((l) => l === '' || LANGUAGE_TAG.test(l), 'must be a language tag such as "en" or "de-CH"'),
  gender: enumField(GENDER),
});

const emailSchema = z.object({
  email: requiredText(200).refine((e) => EMAIL.test(e), 'must be an email address'),
  isEmailVerified: flag(),
});

const phoneSchema = z.object({
  phone: text(50).refine((p) => p === '' || /^\+[0-9 ()./-]{3,}$/.test(p), 'must start with "+" followed by the number'),
  isPhoneVerified: flag(),
});

const humanFields = {
  userName: requiredText(200),
  profile: profileSchema,
  email: emailSchema,
  phone: phoneSchema.optional(),
};

const addHumanSchema = z.object({ ...humanFields, initialPassword: text(MAX_PASSWORD) });

/** ImportHumanUserRequest (compat §1.4), also the `user` of an import bundle's `humanUsers[]`. */
export const importHumanSchema = z.object({
  ...humanFields,
  userId: z.string().trim().min(1).max(200).optional(),
  password: text(MAX_PASSWORD),
  hashedPassword: z.object({ value: text(1000) }).optional(),
  passwordChangeRequired: flag(),
  requestPasswordlessRegistration: flag(),
  // The raw TOTP secret (base32, as pquerna/otp makes it): stored sealed as a verified factor.
  otpCode: text(200).refine((c) => c === '' || normalizeOtpSecret(c) !== undefined, 'must be a base32 TOTP secret'),
  idps: list(z.object({ configId: text(200), externalUserId: text(200), displayName: text(200) })),
  recoveryCodes: list(z.object({ raw: text(200), hash: text(1000) })),
});

type HumanInput = z.output<z.ZodObject<typeof humanFields>>;

export function humanData(input: HumanInput, passwordHash: string | undefined, passwordChangeRequired: boolean): HumanData {
  const { profile } = input;
  return {
    profile: { ...profile, displayName: profile.displayName || `${profile.firstName} ${profile.lastName}` },
    email: input.email,
    ...(input.phone?.phone ? { phone: input.phone } : {}),
    ...(passwordHash ? { passwordHash } : {}),
    passwordChangeRequired,
    failedPasswordAttempts: 0,
  };
}

/** ZITADEL: a human who cannot log in yet (no password, passwordless or IdP link) starts in the initial state. */
export function initialState(canLogIn: boolean): UserState {
  return canLogIn ? 'USER_STATE_ACTIVE' : 'USER_STATE_INITIAL';
}

export function humanUserRoutes(ctx: AppContext): Route[] {
  return [
    apiRoute(ctx, '/management/v1/users/human', {
      POST: async (req, caller) => {
        caller.require('user.write');
        const input = readBody(req, addHumanSchema);
        ctx.orgs.requireOrg(caller.orgId);
        const passwordHash = input.initialPassword ? await ctx.pool.hashPassword(input.initialPassword) : undefined;
        const user = await ctx.orgs.addUser(caller.orgId, {
          userName: input.userName,
          state: initialState(passwordHash !== undefined),
          human: humanData(input, passwordHash, false),
        });
        return ok({ userId: user.id, details: addedDetails(user, user.orgId) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/human/_import', {
      POST: async (req, caller) => {
        caller.require('user.write');
        const input = readBody(req, importHumanSchema);
        ctx.orgs.requireOrg(caller.orgId);
        // Login factors Sesame does not have are refused, not stored and ignored.
        const unsupported = [
          input.requestPasswordlessRegistration && 'requestPasswordlessRegistration (Sesame has no passwordless login)',
          input.idps.length > 0 && 'idps (Sesame has no external identity providers)',
          input.recoveryCodes.length > 0 && 'recoveryCodes (Sesame has no recovery codes)',
        ].filter((x): x is string => typeof x === 'string');
        if (unsupported.length > 0) throw invalidArgument('USER-Uns1p', `not supported by Sesame: ${unsupported.join('; ')}`);
        const encoded = input.hashedPassword?.value;
        // A plaintext password wins over a hash, as in ZITADEL's import.
        if (!input.password && encoded) checkEncodedHash(encoded);
        const passwordHash = input.password ? await ctx.pool.hashPassword(input.password) : encoded || undefined;
        const canLogIn = passwordHash !== undefined || input.requestPasswordlessRegistration || input.idps.length > 0;
        const user = await ctx.orgs.addUser(caller.orgId, {
          ...(input.userId ? { id: input.userId } : {}),
          userName: input.userName,
          state: initialState(canLogIn),
          human: {
            ...humanData(input, passwordHash, input.passwordChangeRequired),
            ...(input.otpCode ? { otpSecretSealed: sealOtpSecret(ctx.masterKey, normalizeOtpSecret(input.otpCode)!) } : {}),
          },
        });
        return ok({ userId: user.id, details: addedDetails(user, user.orgId) });
      },
    }),
  ];
}
