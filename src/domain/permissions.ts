import type { MemberRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

/**
 * Roles and the permissions they grant (a subset of ZITADEL's defaults). Instance roles apply to
 * every org; org roles to their org; project roles to their project.
 */
const READ_ALL = ['policy.read', 'iam.read', 'iam.member.read', 'org.read', 'org.member.read', 'project.read', 'project.app.read', 'project.role.read', 'user.read', 'user.grant.read'];
const ORG_READ = READ_ALL.filter((p) => !p.startsWith('iam.'));

export const ROLE_PERMISSIONS: Readonly<Record<string, readonly string[]>> = {
  IAM_OWNER: ['*'],
  IAM_OWNER_VIEWER: READ_ALL,
  IAM_ORG_MANAGER: ['org.*', 'project.*', 'user.*', 'policy.*', 'iam.read'],
  IAM_USER_MANAGER: ['org.read', 'user.*'],
  ORG_OWNER: ['org.read', 'org.member.*', 'project.*', 'user.*', 'policy.*'],
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
export function hasPermission(
  memberships: readonly View<MemberRecord>[],
  permission: string,
  target: { orgId?: string; projectId?: string },
): boolean {
  for (const m of memberships) {
    const applies =
      m.scope === 'instance' ||
      (target.orgId !== undefined && m.scope === `org:${target.orgId}`) ||
      (target.projectId !== undefined && m.scope === `project:${target.projectId}`);
    if (applies && m.roles.some((r) => grants(r, permission))) return true;
  }
  return false;
}
