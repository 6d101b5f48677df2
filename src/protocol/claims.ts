import type { UserRecord } from '../model/records.js';

/**
 * User claims per scope (OIDC Core §5.4, docs/compatibility.md §3.3), for userinfo and introspection.
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

/** What the ZITADEL URN claims need from the directory. */
export interface ClaimsDirectory {
  getOrg(id: string): { id: string; name: string } | undefined;
  primaryDomainOf(orgId: string): string;
  getProject(id: string): { id: string; projectRoleAssertion: boolean; roles: readonly { key: string }[] } | undefined;
  grantsOf(userId: string): { projectId: string; orgId: string; roleKeys: readonly string[] }[];
}

const ROLE_SCOPE = 'urn:zitadel:iam:org:project:role:';

/** True when role claims were asked for (a role scope, all-projects roles) or the project asserts roles. */
function rolesRequested(scopes: readonly string[], projectRoleAssertion: boolean): boolean {
  return projectRoleAssertion || scopes.some((s) => s.startsWith(ROLE_SCOPE) || s === 'urn:zitadel:iam:org:projects:roles');
}

/**
 * ZITADEL's URN claims (docs/compatibility.md §3.2, §3.3): user metadata, resource owner, and the roles of the user's
 * grants on the project as `{roleKey: {grantOrgId: orgPrimaryDomain}}`.
 */
export function urnClaims(dir: ClaimsDirectory, user: UserRecord, scopes: readonly string[], projectId: string | undefined, withRoles: boolean): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (scopes.includes('urn:zitadel:iam:user:metadata') && user.metadata && Object.keys(user.metadata).length > 0) {
    claims['urn:zitadel:iam:user:metadata'] = Object.fromEntries(Object.entries(user.metadata).map(([k, v]) => [k, Buffer.from(v).toString('base64url')]));
  }
  if (scopes.includes('urn:zitadel:iam:user:resourceowner')) {
    const org = dir.getOrg(user.orgId);
    claims['urn:zitadel:iam:user:resourceowner:id'] = user.orgId;
    if (org) claims['urn:zitadel:iam:user:resourceowner:name'] = org.name;
    claims['urn:zitadel:iam:user:resourceowner:primary_domain'] = dir.primaryDomainOf(user.orgId);
  }
  const project = projectId ? dir.getProject(projectId) : undefined;
  if (withRoles && project && rolesRequested(scopes, project.projectRoleAssertion)) {
    const asked = new Set(scopes.filter((s) => s.startsWith(ROLE_SCOPE)).map((s) => s.slice(ROLE_SCOPE.length)));
    const allRoles = project.projectRoleAssertion || scopes.includes('urn:zitadel:iam:org:projects:roles') || asked.size === 0;
    const roles: Record<string, Record<string, string>> = {};
    for (const grant of dir.grantsOf(user.id)) {
      if (grant.projectId !== project.id) continue;
      for (const key of grant.roleKeys) {
        if (!allRoles && !asked.has(key)) continue;
        // Only roles the project defines now: a grant made while its role was being removed grants nothing of it.
        if (!project.roles.some((role) => role.key === key)) continue;
        (roles[key] ??= {})[grant.orgId] = dir.primaryDomainOf(grant.orgId);
      }
    }
    if (Object.keys(roles).length > 0) {
      claims['urn:zitadel:iam:org:project:roles'] = roles;
      claims[`urn:zitadel:iam:org:project:${project.id}:roles`] = roles;
    }
  }
  return claims;
}
