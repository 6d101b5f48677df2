import { ApiError } from '../model/errors.js';

/**
 * The instance's management project (ZITADEL's project "ZITADEL", `instance.managementProjectId`).
 * A token whose audience holds its id opens the management API as the token's user
 * (src/http/admin/caller.ts), so every app in it receives, for whoever signs in to it, a token for
 * all that person administers. It sits in the default org, but it is the instance's: these rules
 * keep it so.
 */

/** What a permission is checked on (see hasPermission). */
export interface PermissionTarget {
  orgId?: string;
  projectId?: string;
}

/**
 * The target a permission is checked against. Changing the management project (its settings,
 * apps, roles, members, user grants) takes an instance role: an owner of the default org, or a
 * member of the project itself, could otherwise add an app there and collect the management-API
 * tokens of the instance's administrators. Reading it stays with its org and members.
 */
export function permissionTarget(permission: string, target: PermissionTarget, managementProjectId: string): PermissionTarget {
  if (target.projectId !== managementProjectId || permission.endsWith('.read')) return target;
  return {};
}

/**
 * An import never writes into the management project (apps, app keys, roles, members, user grants),
 * whoever runs it and whatever the request allows: a bundle comes from outside the instance.
 */
export function refuseImportIntoManagementProject(projectId: string, managementProjectId: string): void {
  if (projectId === managementProjectId) {
    throw new ApiError('PermissionDenied', 'IMPORT-Mgmt1', `project ${projectId} is the instance's management project: nothing is imported into it`);
  }
}
