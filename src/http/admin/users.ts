import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { UserRecord } from '../../model/records.js';
import type { Caller } from './caller.js';
import { addedDetails, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { nonZero } from '../../zitadel/enums.js';
import { addMachineSchema } from '../../zitadel/users.js';
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

function userView(ctx: UsersPorts, user: UserRecord) {
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
    apiRoute(ctx, '/management/v1/users/:userId', {
      GET: (req, caller) => ok({ user: userView(ctx, requireUserAccess(ctx, caller, req.params[0]!, 'user.read')) }),
      DELETE: removeUserHandler(ctx),
    }),
  ];
}
