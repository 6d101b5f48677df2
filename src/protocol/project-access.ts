import type { ProjectRecord, UserGrantRecord, UserRecord } from '../model/records.js';

/**
 * ZITADEL's project checks (AddProject): `hasProjectCheck` lets only users of an org that has the
 * project sign in to its apps (Sesame has no project grants, so: the owning org); `projectRoleCheck`
 * lets only users with a grant on the project sign in. Pure: undefined when access is allowed.
 */
export function projectAccessDenied(
  project: Pick<ProjectRecord, 'id' | 'orgId' | 'hasProjectCheck' | 'projectRoleCheck'>,
  user: Pick<UserRecord, 'orgId'>,
  grants: readonly Pick<UserGrantRecord, 'projectId'>[],
): string | undefined {
  if (project.hasProjectCheck && user.orgId !== project.orgId) return "the user's organization has no access to this project";
  if (project.projectRoleCheck && !grants.some((g) => g.projectId === project.id)) return 'the user has no grant on this project';
  return undefined;
}
