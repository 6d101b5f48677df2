import type { IdentityProvider } from '../model/records.js';
import type { ExternalIdentity } from '../model/external-identity.js';
import type { View } from '../util/readonly.js';

export type { ExternalIdentity };

const str = (v: unknown, max = 200): string => (typeof v === 'string' ? v.trim().slice(0, max) : typeof v === 'number' && Number.isFinite(v) ? String(v) : '');

/** A provider's claims (an ID token or userinfo; an OAuth user endpoint's JSON) as an external identity, or undefined without an id. */
export function identityOfClaims(provider: View<IdentityProvider>, claims: Record<string, unknown>): ExternalIdentity | undefined {
  const oauth = provider.kind === 'oauth' || provider.kind === 'github' || provider.kind === 'githubEnterprise';
  const externalUserId = str(oauth ? claims[provider.idAttribute ?? 'id'] : claims.sub);
  if (!externalUserId) return undefined;
  const email = str(claims.email, 320);
  const name = str(claims.name);
  const [first = '', ...rest] = name.split(/\s+/).filter(Boolean);
  const mapped = (claim: string | undefined) => (claim ? str(claims[claim], claim === 'email' ? 320 : 200) : '');
  const userName = mapped(provider.userNameClaim) || str(claims.preferred_username) || str(claims.login) || str(claims.username) || email || externalUserId;
  // Empty when the provider does not say: the person fills them in (an automatic creation falls back to the user name).
  const firstName = str(claims.given_name) || first;
  const lastName = str(claims.family_name) || rest.join(' ');
  // Microsoft's `email` is whatever the tenant holds: verified only when the provider says its tenant verifies them.
  const emailVerified = email !== '' && (provider.kind === 'azure' ? provider.emailVerified === true : claims.email_verified === true || claims.email_verified === 'true');
  return {
    idpId: provider.id,
    externalUserId,
    userName,
    email,
    emailVerified,
    firstName,
    lastName,
    displayName: mapped(provider.displayNameClaim) || name || `${firstName} ${lastName}`.trim() || userName,
    nickName: str(claims.nickname),
    preferredLanguage: str(claims.locale, 10),
    phone: str(claims.phone_number, 50),
    phoneVerified: claims.phone_number_verified === true,
  };
}

/** GitHub's `/user/emails`: the primary address when GitHub verified it (its `/user` shows only a public one, unverified). */
export function githubPrimaryEmail(emails: unknown): { email: string; verified: boolean } | undefined {
  if (!Array.isArray(emails)) return undefined;
  const primary = emails.find((e) => e && typeof e === 'object' && (e as Record<string, unknown>).primary === true) as Record<string, unknown> | undefined;
  return primary && typeof primary.email === 'string' ? { email: primary.email.slice(0, 320), verified: primary.verified === true } : undefined;
}

/**
 * Whether an account of Microsoft Entra tenant `tid` may sign in through a provider's tenant. The
 * issuer itself is checked by openid-client against Microsoft's discovery (a fixed tenant's own,
 * or on the multi-tenant endpoints the token's tenant); here: `organizations` refuses the personal
 * accounts' tenant and `consumers` takes only it.
 */
export const MICROSOFT_CONSUMERS_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';
export const MICROSOFT_MULTI_TENANT: ReadonlySet<string> = new Set(['common', 'organizations', 'consumers']);

export function microsoftTenantAllowed(tenant: string, tid: unknown): boolean {
  if (!MICROSOFT_MULTI_TENANT.has(tenant)) return true;
  if (typeof tid !== 'string' || !/^[0-9a-f-]{36}$/i.test(tid)) return false;
  if (tenant === 'organizations') return tid.toLowerCase() !== MICROSOFT_CONSUMERS_TENANT;
  if (tenant === 'consumers') return tid.toLowerCase() === MICROSOFT_CONSUMERS_TENANT;
  return true;
}
