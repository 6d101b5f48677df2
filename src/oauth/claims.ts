import type { UserRecord } from '../model/records.js';

/**
 * User claims per scope (OIDC Core §5.4, ZITADEL compat §3.3), for userinfo and introspection.
 * Pure: the caller supplies the preferred login name.
 */
const GENDER: Record<string, string> = { GENDER_FEMALE: 'female', GENDER_MALE: 'male', GENDER_DIVERSE: 'diverse' };

export function userClaims(user: UserRecord, scopes: readonly string[], preferredLoginName: string): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  const has = (s: string) => scopes.includes(s);
  if (has('profile')) {
    if (user.human) {
      const p = user.human.profile;
      const name = p.displayName || `${p.firstName} ${p.lastName}`.trim();
      if (name) claims.name = name;
      if (p.firstName) claims.given_name = p.firstName;
      if (p.lastName) claims.family_name = p.lastName;
      if (p.nickName) claims.nickname = p.nickName;
      if (GENDER[p.gender]) claims.gender = GENDER[p.gender];
      if (p.preferredLanguage) claims.locale = p.preferredLanguage;
    } else if (user.machine) {
      claims.name = user.machine.name;
    }
    claims.preferred_username = preferredLoginName;
    claims.updated_at = Math.floor(user.changedAt / 1000);
  }
  if (has('email') && user.human) {
    claims.email = user.human.email.email;
    claims.email_verified = user.human.email.isEmailVerified;
  }
  if (has('phone') && user.human?.phone) {
    claims.phone_number = user.human.phone.phone;
    claims.phone_number_verified = user.human.phone.isPhoneVerified;
  }
  return claims;
}
