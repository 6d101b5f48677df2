import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { notFound } from '../../model/errors.js';
import type { UserGrantRecord } from '../../model/records.js';
import { addedDetails, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { requireUserAccess } from './users.js';
import { readBody, requiredText, text } from '../../zitadel/validation.js';
import type { UsersPorts } from './users.js';
import type { CallerPorts } from './caller.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UserGrantsPorts = Pick<Ports, 'orgs'> & UsersPorts & CallerPorts;

/** User grants (a user's roles on a project): AddUserGrant and GetUserGrantByID. */
const addUserGrantSchema = z.object({
  projectId: requiredText(200),
  projectGrantId: text(200),
  roleKeys: z.array(z.string().min(1)).default([]),
});

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
    }),
  ];
}
