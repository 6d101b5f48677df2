import { ApiError } from '../model/errors.js';
import type { AppRecord, MemberRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

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
 *
 * The instance's management project (ZITADEL's project "ZITADEL", `instance.managementProjectId`).
 * A token whose audience holds its id opens the management API as the token's user
 * (src/http/admin/caller.ts), so every app in it receives, for whoever signs in to it, a token for
 * all that person administers. It sits in the default org, but it is the instance's: the rules of
 * this module keep it so.
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
 * Whether an app's tokens may carry a user's administrative power — the management API's audience
 * (the API then acts with the user's roles), or the user as the actor of an impersonation. A
 * self-registered client's never. The instance's own apps (those of the management project, which
 * only instance roles change) always. Any other app only for users who administer nothing beyond
 * the app's organization: else an org administrator's app would collect an instance owner's (or
 * another org's owner's) power from a sign-in, power its makers could not act with themselves
 * (domain/permissions.ts missingToActOn).
 */
export function carriesPowerOf(
  app: Pick<View<AppRecord>, 'projectId' | 'orgId' | 'registration'>,
  managementProjectId: string,
  memberships: readonly Pick<MemberRecord, 'scope'>[],
  orgOfProject: (projectId: string) => string | undefined,
): boolean {
  if (app.registration !== undefined) return false;
  if (app.projectId === managementProjectId) return true;
  return memberships.every(({ scope }) => scope === `org:${app.orgId}` || (scope.startsWith('project:') && orgOfProject(scope.slice('project:'.length)) === app.orgId));
}

/**
 * The audience a token may carry: without the management project where the app may not carry the
 * user's power (carriesPowerOf), however it came there (an `:aud` scope, a resource, a token
 * exchange, a grant stored earlier, a role given since). Otherwise as it is: no copy on the hot
 * paths of token issuance.
 */
export function withoutManagementAudience(aud: readonly string[], carriesPower: () => boolean, managementProjectId: string): readonly string[] {
  return !aud.includes(managementProjectId) || carriesPower() ? aud : aud.filter((a) => a !== managementProjectId);
}
