import { z } from 'zod';
import { EMAIL, MAX_PASSWORD } from '../domain/human-users.js';
import { normalizeOtpSecret } from '../crypto/otp-secret.js';
import { ACCESS_TOKEN_TYPE, enumField, GENDER } from './enums.js';
import { flag, list, pathSegment, requiredText, text } from './validation.js';
import { phoneDigits } from '../model/phone.js';
import { listQuerySchema, oneQueryOf, sortedBy, textMatches, textQuery, unsupportedSorting } from './list-query.js';
import type { UserRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

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

export const emailSchema = z.object({
  email: requiredText(200).refine((e) => EMAIL.test(e), 'must be an email address'),
  isEmailVerified: flag(),
});

export const phoneSchema = z.object({
  phone: text(50).refine((p) => p === '' || phoneDigits(p) !== undefined, 'must be "+" and 3 to 20 digits (spaces, dashes, dots and brackets allowed between them)'),
  isPhoneVerified: flag(),
});

const humanFields = {
  userName: requiredText(200),
  profile: profileSchema,
  email: emailSchema,
  phone: phoneSchema.optional(),
};

export const addHumanSchema = z.object({ ...humanFields, initialPassword: text(MAX_PASSWORD) });

/** ImportHumanUserRequest (docs/compatibility.md §1.4), also the `user` of an import bundle's `humanUsers[]`. */
export const importHumanSchema = z.object({
  ...humanFields,
  userId: pathSegment().optional(),
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
  userId: pathSegment().optional(),
});

/** SetHumanPasswordRequest (`POST /management/v1/users/{userId}/password`): the password as typed, not trimmed. */
export const setHumanPasswordSchema = z.object({
  password: z.string().min(1, 'must not be empty').max(MAX_PASSWORD),
  noChangeRequired: flag(),
});

/** ListUsersRequest's filters (ZITADEL's SearchQuery oneof, the ones Sesame answers). */
const USER_TYPES = ['TYPE_HUMAN', 'TYPE_MACHINE'] as const;
const USER_STATES = ['USER_STATE_ACTIVE', 'USER_STATE_INACTIVE', 'USER_STATE_LOCKED', 'USER_STATE_INITIAL'] as const;
const userQuerySchema = oneQueryOf({
  userNameQuery: textQuery('userName'),
  emailQuery: textQuery('emailAddress'),
  displayNameQuery: textQuery('displayName'),
  loginNameQuery: textQuery('loginName'),
  typeQuery: z.object({ type: z.enum(USER_TYPES) }).strict(),
  stateQuery: z.object({ state: z.enum(USER_STATES) }).strict(),
  inUserIdsQuery: z
    .object({
      userIds: z
        .array(z.string().max(200))
        .max(1000)
        .transform((ids) => new Set(ids)),
    })
    .strict(),
});
export type UserQuery = z.output<typeof userQuerySchema>;

const USER_SORTING = ['USER_FIELD_NAME_UNSPECIFIED', 'USER_FIELD_NAME_USER_NAME', 'USER_FIELD_NAME_DISPLAY_NAME', 'USER_FIELD_NAME_EMAIL', 'USER_FIELD_NAME_CREATION_DATE'] as const;

/** ListUsersRequest (`POST /management/v1/users/_search`). */
export const listUsersSchema = z
  .object({
    query: listQuerySchema,
    sortingColumn: z.string().default('USER_FIELD_NAME_UNSPECIFIED'),
    queries: list(userQuerySchema).refine((queries) => queries.length <= 20, 'at most 20 queries'),
  })
  .strict();

const displayNameOf = (user: View<UserRecord>) => user.human?.profile.displayName || (user.human ? `${user.human.profile.firstName} ${user.human.profile.lastName}` : (user.machine?.name ?? ''));

/** Whether a user passes one filter of ListUsers. */
export function userMatches(user: View<UserRecord>, query: UserQuery, loginNames: (user: View<UserRecord>) => readonly string[]): boolean {
  if (query.userNameQuery) return textMatches(user.userName, query.userNameQuery.userName, query.userNameQuery.method);
  if (query.emailQuery) return user.human !== undefined && textMatches(user.human.email.email, query.emailQuery.emailAddress, query.emailQuery.method);
  if (query.displayNameQuery) return textMatches(displayNameOf(user), query.displayNameQuery.displayName, query.displayNameQuery.method);
  if (query.loginNameQuery) return loginNames(user).some((name) => textMatches(name, query.loginNameQuery!.loginName, query.loginNameQuery!.method));
  if (query.typeQuery) return query.typeQuery.type === 'TYPE_HUMAN' ? user.human !== undefined : user.machine !== undefined;
  if (query.stateQuery) return user.state === query.stateQuery.state;
  return query.inUserIdsQuery!.userIds.has(user.id);
}

/** The users sorted ascending by ListUsers' column (creation order when unspecified). */
export function userSorting(column: string, users: View<UserRecord>[]): View<UserRecord>[] {
  const key: Record<(typeof USER_SORTING)[number], (user: View<UserRecord>) => string | number> = {
    USER_FIELD_NAME_UNSPECIFIED: (user) => user.createdAt,
    USER_FIELD_NAME_CREATION_DATE: (user) => user.createdAt,
    USER_FIELD_NAME_USER_NAME: (user) => user.userName.toLowerCase(),
    USER_FIELD_NAME_DISPLAY_NAME: (user) => displayNameOf(user).toLowerCase(),
    USER_FIELD_NAME_EMAIL: (user) => user.human?.email.email.toLowerCase() ?? '',
  };
  if (!Object.hasOwn(key, column)) unsupportedSorting(column, USER_SORTING);
  return sortedBy(users, key[column as keyof typeof key]);
}
