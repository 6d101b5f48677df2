import { z } from 'zod';
import type { Route } from '../types.js';
import type { MemberRecord } from '../../model/records.js';
import type { View } from '../../util/readonly.js';
import { listDetails, viewDetails } from '../../zitadel/details.js';
import { listQuerySchema, pageOf } from '../../zitadel/list-query.js';
import { readBody } from '../../zitadel/validation.js';
import { apiRoute, ok } from './endpoint.js';
import { userView, type UsersPorts } from './users.js';

/** What this module uses of the wired parts (src/app.ts). */
export type MyUserPorts = UsersPorts;

/**
 * ZITADEL's auth API about the caller itself: GetMyUser (`GET /auth/v1/users/me`) and
 * ListMyMemberships (`POST /auth/v1/memberships/me/_search`, the roles the caller administers
 * with: the console shows what they may do). Whoever is authenticated may ask about themselves.
 */
const listMembershipsSchema = z.object({ query: listQuerySchema });

/** A membership as ZITADEL's auth API answers it: the scope as `iam`, `orgId` or `projectId`. */
function membershipView(ctx: MyUserPorts, member: View<MemberRecord>) {
  const base = { userId: member.userId, roles: member.roles };
  if (member.scope === 'instance') return { ...base, details: viewDetails(member, undefined), iam: true, displayName: 'instance' };
  if (member.scope.startsWith('org:')) {
    const orgId = member.scope.slice('org:'.length);
    return { ...base, details: viewDetails(member, orgId), orgId, displayName: ctx.orgs.getOrg(orgId)?.name ?? orgId };
  }
  const projectId = member.scope.slice('project:'.length);
  const project = ctx.orgs.getProject(projectId);
  return { ...base, details: viewDetails(member, project?.orgId), projectId, orgId: project?.orgId, displayName: project?.name ?? projectId };
}

export function myUserRoutes(ctx: MyUserPorts): Route[] {
  return [
    apiRoute(ctx, '/auth/v1/users/me', {
      GET: (_req, caller) => ok({ user: userView(ctx, caller.user) }),
    }),
    apiRoute(ctx, '/auth/v1/memberships/me/_search', {
      POST: (req, caller) => {
        const { query } = readBody(req, listMembershipsSchema);
        const memberships = ctx.orgs.memberships(caller.user.id);
        return ok({ details: listDetails(memberships.length), result: pageOf(memberships, { ...query, asc: true }).map((m) => membershipView(ctx, m)) });
      },
    }),
  ];
}
