import { ApiError } from '../model/errors.js';
import type { AppRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

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

/**
 * Why self-registered clients may not be created in `projectId`, or undefined. Anyone may have
 * registered one (open registration, or any user allowed to add apps), and an app of the
 * management project gets management-API tokens of whoever signs in.
 */
export function registrationProjectProblem(projectId: string, managementProjectId: string): string | undefined {
  return projectId === managementProjectId ? `project ${projectId} is the instance's management project; registered clients may not be created in it` : undefined;
}

/**
 * The audience a token of `app` may carry: a self-registered client's never holds the management
 * project, however it came there (the app's own project, an `:aud` scope, a resource, a token
 * exchange, a grant stored earlier). Other apps' audiences are left as they are.
 */
export function withoutManagementAudience(aud: readonly string[], app: View<AppRecord>, managementProjectId: string): readonly string[] {
  // The instance's own apps keep theirs as it is: no copy on the hot paths of token issuance.
  return app.registration === undefined ? aud : aud.filter((a) => a !== managementProjectId);
}
