import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { notFound } from '../../model/errors.js';
import type { UserGrantRecord } from '../../model/records.js';
import { addedDetails, changedDetails, listDetails, viewDetails } from '../../zitadel/details.js';
import { listQuerySchema, oneQueryOf, pageOf } from '../../zitadel/list-query.js';
import { clock } from '../../util/clock.js';
import { apiRoute, ok } from './endpoint.js';
import { requireUserAccess } from './users.js';
import { list, readBody, requiredText, text } from '../../zitadel/validation.js';
import type { UsersPorts } from './users.js';
import type { CallerPorts } from './caller.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UserGrantsPorts = Pick<Ports, 'orgs'> & UsersPorts & CallerPorts;

/** User grants (a user's roles on a project): AddUserGrant, GetUserGrantByID, RemoveUserGrant and ListUserGrants. */
const addUserGrantSchema = z.object({
  projectId: requiredText(200),
  projectGrantId: text(200),
  roleKeys: z.array(z.string().min(1)).default([]),
});

/** ListUserGrants' filters: the user, the project, a role key. */
const grantQuerySchema = oneQueryOf({
  userIdQuery: z.object({ userId: z.string().max(200) }).strict(),
  projectIdQuery: z.object({ projectId: z.string().max(200) }).strict(),
  roleKeyQuery: z.object({ roleKey: z.string().max(200) }).strict(),
});
const listUserGrantsSchema = z.object({ query: listQuerySchema, queries: list(grantQuerySchema).refine((q) => q.length <= 20, 'at most 20 queries') }).strict();

function grantMatches(grant: View<UserGrantRecord>, query: z.output<typeof grantQuerySchema>): boolean {
  if (query.userIdQuery) return grant.userId === query.userIdQuery.userId;
  if (query.projectIdQuery) return grant.projectId === query.projectIdQuery.projectId;
  return grant.roleKeys.includes(query.roleKeyQuery!.roleKey);
}

function userGrantView(ctx: UserGrantsPorts, grant: View<UserGrantRecord>) {
  const user = ctx.orgs.getUser(grant.userId);
  const org = ctx.orgs.getOrg(grant.orgId);
  const project = ctx.orgs.getProject(grant.projectId);
  return {
    id: grant.id,
    details: viewDetails(grant, grant.orgId),
    roleKeys: grant.roleKeys,
    state: 'USER_GRANT_STATE_ACTIVE',
    userId: grant.userId,
    userName: user?.userName,
    firstName: user?.human?.profile.firstName,
    lastName: user?.human?.profile.lastName,
    email: user?.human?.email.email,
    displayName: user?.human?.profile.displayName ?? user?.machine?.name,
    preferredLoginName: user ? ctx.orgs.preferredLoginName(user) : undefined,
    userType: user?.human ? 'TYPE_HUMAN' : user?.machine ? 'TYPE_MACHINE' : undefined,
    orgId: grant.orgId,
    orgName: org?.name,
    orgDomain: org ? ctx.orgs.primaryDomain(org) : undefined,
    projectId: grant.projectId,
    projectName: project?.name,
    projectGrantId: grant.projectGrantId,
  };
}

export function userGrantRoutes(ctx: UserGrantsPorts): Route[] {
  return [
    apiRoute(ctx, '/management/v1/users/:userId/grants', {
      POST: async (req, caller) => {
        const userId = req.params[0]!;
        const input = readBody(req, addUserGrantSchema);
        caller.require('user.grant.write', { orgId: caller.orgId, projectId: input.projectId });
        const user = caller.requireActOn(userId, 'user.grant.write');
        // Sesame has no project grants (projects shared with other orgs) yet: only own projects.
        if (input.projectGrantId) throw notFound('PROJECT-Gr4nt', `project grant ${input.projectGrantId} not found`);
        const project = ctx.orgs.requireProject(input.projectId, caller.orgId);
        const grant = await ctx.orgs.by(caller.by).addUserGrant({
          userId: user.id,
          orgId: caller.orgId,
          projectId: project.id,
          projectGrantId: '',
          roleKeys: [...new Set(input.roleKeys)],
        });
        return ok({ userGrantId: grant.id, details: addedDetails(grant, grant.orgId) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/grants/:grantId', {
      GET: (req, caller) => {
        const user = requireUserAccess(ctx, caller, req.params[0]!, 'user.grant.read');
        const grant = ctx.orgs.getUserGrant(req.params[1]!);
        if (!grant || grant.userId !== user.id || grant.orgId !== caller.orgId) {
          throw notFound('USER-Gr4nt', `user grant ${req.params[1]} not found`);
        }
        return ok({ userGrant: userGrantView(ctx, grant) });
      },
      // RemoveUserGrant: with the right to grant on the project, and to act on the user (as adding takes).
      DELETE: async (req, caller) => {
        const grant = ctx.orgs.getUserGrant(req.params[1]!);
        if (!grant || grant.userId !== req.params[0] || grant.orgId !== caller.orgId) throw notFound('USER-Gr4nt', `user grant ${req.params[1]} not found`);
        caller.require('user.grant.delete', { orgId: caller.orgId, projectId: grant.projectId });
        caller.requireActOn(grant.userId, 'user.grant.write');
        const removed = await ctx.orgs.by(caller.by).removeUserGrant(grant.id, grant.userId, caller.orgId);
        return ok({ details: changedDetails({ ...removed, changedAt: clock.now() }, removed.orgId) });
      },
    }),
    // ListUserGrants: the org's grants the caller may read (per project), filtered and paged.
    apiRoute(ctx, '/management/v1/users/grants/_search', {
      POST: (req, caller) => {
        const input = readBody(req, listUserGrantsSchema);
        const matching = ctx.orgs
          .grantsOfOrg(caller.orgId)
          .filter((grant) => caller.can('user.grant.read', { orgId: caller.orgId, projectId: grant.projectId }) && input.queries.every((query) => grantMatches(grant, query)));
        return ok({ details: listDetails(matching.length), result: pageOf(matching, input.query).map((grant) => userGrantView(ctx, grant)) });
      },
    }),
  ];
}
