import { z } from 'zod';
import { EMAIL, MAX_PASSWORD } from '../domain/human-users.js';
import { normalizeOtpSecret } from '../crypto/otp-secret.js';
import { ACCESS_TOKEN_TYPE, enumField, GENDER } from './enums.js';
import { flag, list, requiredText, text } from './validation.js';

/** User requests of ZITADEL's management API, also the users of an import bundle. */
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/;

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

export const addHumanSchema = z.object({ ...humanFields, initialPassword: text(MAX_PASSWORD) });

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

/** AddMachineUserRequest, also the `user` of an import bundle's `machineUsers[]`. */
export const addMachineSchema = z.object({
  userName: requiredText(200),
  name: requiredText(200),
  description: text(500),
  accessTokenType: enumField(ACCESS_TOKEN_TYPE),
  userId: z.string().trim().min(1).max(200).optional(),
});


/** SetHumanPasswordRequest (`POST /management/v1/users/{userId}/password`): the password as typed, not trimmed. */
export const setHumanPasswordSchema = z.object({
  password: z.string().min(1, 'must not be empty').max(MAX_PASSWORD),
  noChangeRequired: flag(),
});
