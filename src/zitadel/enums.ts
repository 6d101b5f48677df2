import { z } from 'zod';

/**
 * ZITADEL enums used by the provisioning API, in numeric order: protojson accepts the name or the
 * number, and the first name (number 0) is the zero value that output omits.
 */
export const GENDER = ['GENDER_UNSPECIFIED', 'GENDER_FEMALE', 'GENDER_MALE', 'GENDER_DIVERSE'] as const;
export const ACCESS_TOKEN_TYPE = ['ACCESS_TOKEN_TYPE_BEARER', 'ACCESS_TOKEN_TYPE_JWT'] as const;
export const KEY_TYPE = ['KEY_TYPE_UNSPECIFIED', 'KEY_TYPE_JSON'] as const;
export const PRIVATE_LABELING_SETTING = [
  'PRIVATE_LABELING_SETTING_UNSPECIFIED',
  'PRIVATE_LABELING_SETTING_ENFORCE_PROJECT_RESOURCE_OWNER_POLICY',
  'PRIVATE_LABELING_SETTING_ALLOW_LOGIN_USER_RESOURCE_OWNER_POLICY',
] as const;
export const OIDC_RESPONSE_TYPE = ['OIDC_RESPONSE_TYPE_CODE', 'OIDC_RESPONSE_TYPE_ID_TOKEN', 'OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN'] as const;
export const OIDC_GRANT_TYPE = [
  'OIDC_GRANT_TYPE_AUTHORIZATION_CODE',
  'OIDC_GRANT_TYPE_IMPLICIT',
  'OIDC_GRANT_TYPE_REFRESH_TOKEN',
  'OIDC_GRANT_TYPE_DEVICE_CODE',
  'OIDC_GRANT_TYPE_TOKEN_EXCHANGE',
] as const;
export const OIDC_APP_TYPE = ['OIDC_APP_TYPE_WEB', 'OIDC_APP_TYPE_USER_AGENT', 'OIDC_APP_TYPE_NATIVE'] as const;
export const OIDC_AUTH_METHOD_TYPE = ['OIDC_AUTH_METHOD_TYPE_BASIC', 'OIDC_AUTH_METHOD_TYPE_POST', 'OIDC_AUTH_METHOD_TYPE_NONE', 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT'] as const;
export const OIDC_TOKEN_TYPE = ['OIDC_TOKEN_TYPE_BEARER', 'OIDC_TOKEN_TYPE_JWT'] as const;
export const OIDC_VERSION = ['OIDC_VERSION_1_0'] as const;
export const API_AUTH_METHOD_TYPE = ['API_AUTH_METHOD_TYPE_BASIC', 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT'] as const;

type Names = readonly [string, ...string[]];

/** An enum field: its name or its number; a missing field is the zero value, as in protobuf. */
export function enumField<const T extends Names>(names: T) {
  return enumValue(names).default(names[0] as T[number]);
}

/** An enum element without a default (for repeated fields). */
export function enumValue<const T extends Names>(names: T) {
  return z.preprocess((v) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < names.length ? names[v] : v), z.enum(names as unknown as [T[number], ...T[number][]]));
}

const ZERO_NAMES: ReadonlySet<string> = new Set(
  [GENDER, ACCESS_TOKEN_TYPE, KEY_TYPE, PRIVATE_LABELING_SETTING, OIDC_RESPONSE_TYPE, OIDC_GRANT_TYPE, OIDC_APP_TYPE, OIDC_AUTH_METHOD_TYPE, OIDC_TOKEN_TYPE, OIDC_VERSION, API_AUTH_METHOD_TYPE].map(
    (names) => names[0],
  ),
);

/** An enum for output: undefined when it is its enum's zero value (or any `*_UNSPECIFIED`), so it is omitted. */
export function nonZero(name: string | undefined): string | undefined {
  if (name === undefined || ZERO_NAMES.has(name) || name.endsWith('_UNSPECIFIED')) return undefined;
  return name;
}
