import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { UserRecord } from '../../model/records.js';
import type { View } from '../../util/readonly.js';
import type { Caller } from './caller.js';
import { addedDetails, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { nonZero } from '../../zitadel/enums.js';
import { addMachineSchema, listUsersSchema, userMatches, userSorting } from '../../zitadel/users.js';
import { listDetails } from '../../zitadel/details.js';
import { pageOf } from '../../zitadel/list-query.js';
import { readBody } from '../../zitadel/validation.js';
import type { CallerPorts } from './caller.js';
import { removeUserHandler, type UserLifecyclePorts } from './user-lifecycle.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UsersPorts = Pick<Ports, 'clients' | 'orgs'> & CallerPorts;

/** Checks `permission` in the org context and returns the user, which must belong to that org. */
export function requireUserAccess(ctx: Pick<UsersPorts, 'orgs'>, caller: Caller, userId: string, permission: string): UserRecord {
  caller.require(permission);
  return ctx.orgs.requireUser(userId, caller.orgId);
}

export function userView(ctx: UsersPorts, user: View<UserRecord>) {
  const { human, machine } = user;
  return {
    id: user.id,
    details: viewDetails(user, user.orgId),
    state: user.state,
    userName: user.userName,
    loginNames: ctx.orgs.loginNames(user),
    preferredLoginName: ctx.orgs.preferredLoginName(user),
    human: human
      ? {
          profile: { ...human.profile, gender: nonZero(human.profile.gender) },
          email: human.email,
          phone: human.phone ?? {},
        }
      : undefined,
    machine: machine
      ? {
          name: machine.name,
          description: machine.description,
          hasSecret: ctx.clients.hasMachineSecret(user.id),
          accessTokenType: nonZero(machine.accessTokenType),
        }
      : undefined,
  };
}

export function userRoutes(ctx: UsersPorts & UserLifecyclePorts): Route[] {
  return [
    apiRoute(ctx, '/management/v1/users/machine', {
      POST: async (req, caller) => {
        caller.require('user.write');
        const { userId, userName, ...machine } = readBody(req, addMachineSchema);
        ctx.orgs.requireOrg(caller.orgId);
        const user = await ctx.orgs.by(caller.by).addUser(caller.orgId, { ...(userId ? { id: userId } : {}), userName, machine });
        return ok({ userId: user.id, details: addedDetails(user, user.orgId) });
      },
    }),
    // ListUsers: the people and machine users of the org the request acts on, filtered and paged.
    apiRoute(ctx, '/management/v1/users/_search', {
      POST: (req, caller) => {
        caller.require('user.read');
        const input = readBody(req, listUsersSchema);
        ctx.orgs.requireOrg(caller.orgId);
        const loginNames = (user: View<UserRecord>) => ctx.orgs.loginNames(user);
        const matching = ctx.orgs.usersOfOrg(caller.orgId).filter((user) => input.queries.every((query) => userMatches(user, query, loginNames)));
        const sorted = userSorting(input.sortingColumn, matching);
        return ok({ details: listDetails(sorted.length), sortingColumn: input.sortingColumn, result: pageOf(sorted, input.query).map((user) => userView(ctx, user)) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId', {
      GET: (req, caller) => ok({ user: userView(ctx, requireUserAccess(ctx, caller, req.params[0]!, 'user.read')) }),
      DELETE: removeUserHandler(ctx),
    }),
  ];
}
