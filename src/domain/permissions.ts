import type { MemberRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

/**
 * Roles and the permissions they grant (a subset of ZITADEL's defaults). Instance roles apply to
 * every org; org roles to their org; project roles to their project.
 */
const READ_ALL = [
  'policy.read',
  'iam.policy.read',
  'iam.read',
  'iam.member.read',
  'org.read',
  'org.member.read',
  'project.read',
  'project.app.read',
  'project.role.read',
  'user.read',
  'user.grant.read',
  'iam.idp.read',
  'org.idp.read',
];
const ORG_READ = READ_ALL.filter((p) => !p.startsWith('iam.'));

export const ROLE_PERMISSIONS: Readonly<Record<string, readonly string[]>> = {
  IAM_OWNER: ['*'],
  // The activity log: the instance's owners (ZITADEL's IAM_OWNER_VIEWER reads events too).
  IAM_OWNER_VIEWER: [...READ_ALL, 'events.read'],
  IAM_ORG_MANAGER: ['org.*', 'project.*', 'user.*', 'policy.*', 'iam.read'],
  IAM_USER_MANAGER: ['org.read', 'user.*'],
  ORG_OWNER: ['org.read', 'org.member.*', 'org.idp.*', 'project.*', 'user.*', 'policy.*'],
  ORG_OWNER_VIEWER: ORG_READ,
  ORG_USER_MANAGER: ['org.read', 'user.*'],
  ORG_PROJECT_CREATOR: ['org.read', 'project.create'],
  PROJECT_OWNER: ['project.*'],
  PROJECT_OWNER_VIEWER: ['project.read', 'project.app.read', 'project.role.read'],
  // Token exchange with an actor token (impersonation), ZITADEL's impersonator roles.
  IAM_ADMIN_IMPERSONATOR: ['impersonation', 'impersonation.admin'],
  IAM_END_USER_IMPERSONATOR: ['impersonation'],
  ORG_ADMIN_IMPERSONATOR: ['impersonation', 'impersonation.admin'],
  ORG_END_USER_IMPERSONATOR: ['impersonation'],
};

export const INSTANCE_ROLES = ['IAM_OWNER', 'IAM_OWNER_VIEWER', 'IAM_ORG_MANAGER', 'IAM_USER_MANAGER', 'IAM_ADMIN_IMPERSONATOR', 'IAM_END_USER_IMPERSONATOR'];
export const ORG_ROLES = ['ORG_OWNER', 'ORG_OWNER_VIEWER', 'ORG_USER_MANAGER', 'ORG_PROJECT_CREATOR', 'ORG_ADMIN_IMPERSONATOR', 'ORG_END_USER_IMPERSONATOR'];

function grants(role: string, permission: string): boolean {
  for (const p of ROLE_PERMISSIONS[role] ?? []) {
    if (p === '*' || p === permission) return true;
    if (p.endsWith('.*') && permission.startsWith(p.slice(0, -1))) return true;
  }
  return false;
}

/** True when one of the memberships grants `permission` on the org (and project, if given). */
export function hasPermission(memberships: readonly View<MemberRecord>[], permission: string, target: { orgId?: string; projectId?: string }): boolean {
  for (const m of memberships) {
    const applies = m.scope === 'instance' || (target.orgId !== undefined && m.scope === `org:${target.orgId}`) || (target.projectId !== undefined && m.scope === `project:${target.projectId}`);
    if (applies && m.roles.some((r) => grants(r, permission))) return true;
  }
  return false;
}

/**
 * What one user does to another: change it (state, credentials, factors, metadata, identity),
 * remove it, grant it roles, or act as it (impersonation, token exchange with an actor token).
 */
export type UserAction = 'user.write' | 'user.delete' | 'user.grant.write' | 'impersonation';

/** The user acted on: its org and its memberships (instance, org and project roles). */
export interface TargetUser {
  orgId: string;
  memberships: readonly View<MemberRecord>[];
}

/** Where a membership scope's rights apply, as a permission target (`instance` → every org). */
function scopeTarget(scope: string, orgOfProject: (projectId: string) => string | undefined): { orgId?: string; projectId?: string } {
  if (scope === 'instance') return {};
  if (scope.startsWith('org:')) return { orgId: scope.slice(4) };
  const projectId = scope.slice('project:'.length);
  const orgId = orgOfProject(projectId);
  return orgId === undefined ? { projectId } : { orgId, projectId };
}

/** The permission that hands out a scope's roles: whoever holds it could make anyone what the target is. */
function grantingPermission(scope: string): string {
  if (scope === 'instance') return 'iam.member.write';
  return scope.startsWith('org:') ? 'org.member.write' : 'project.member.write';
}

/**
 * The one rule for acting on a user: the action's permission in the target's org, and,
 * for every scope the target administers, a right of that scope — the right to grant its roles,
 * or for impersonation the admin impersonator role there. An instance membership thus needs an
 * instance role: an org owner cannot set an instance owner's password, lock it, remove it, mint
 * its credentials or impersonate it, and a user manager cannot take over an org owner. Without
 * this, acting on a user is a way to its privileges (sign in as them, or act as them).
 *
 * Returns what is missing (for the refusal's message), or undefined when the caller may act.
 */
export function missingToActOn(caller: readonly View<MemberRecord>[], action: UserAction, target: TargetUser, orgOfProject: (projectId: string) => string | undefined): string | undefined {
  const administers = target.memberships.length > 0;
  const own = action === 'impersonation' && administers ? 'impersonation.admin' : action;
  if (!hasPermission(caller, own, { orgId: target.orgId })) return own;
  for (const { scope } of target.memberships) {
    const needed = action === 'impersonation' ? 'impersonation.admin' : grantingPermission(scope);
    if (!hasPermission(caller, needed, scopeTarget(scope, orgOfProject))) return `${needed} on ${scope} (the user holds roles there)`;
  }
  return undefined;
}
