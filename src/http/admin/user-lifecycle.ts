import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { UserRecord } from '../../model/records.js';
import type { View } from '../../util/readonly.js';
import { changedDetails } from '../../zitadel/details.js';
import { preconditionFailed } from '../../model/errors.js';
import { setHumanPasswordSchema } from '../../zitadel/users.js';
import { requireComplexPassword } from '../../domain/password-complexity.js';
import { readBody } from '../../zitadel/validation.js';
import { endSessionsOfUser, type SessionEndPorts } from '../../services/session-end.js';
import { afterNewPassword } from '../../services/new-password.js';
import { apiRoute, ok, type CallerHandler } from './endpoint.js';
import { clock } from '../../util/clock.js';
import type { Caller, CallerPorts } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UserLifecyclePorts = Pick<Ports, 'clients' | 'orgs' | 'pool' | 'notifications'> & SessionEndPorts & CallerPorts;

/**
 * DELETE /management/v1/users/{id} (mounted with the GET of that path in users.ts): removes the
 * user and their machine credentials, and ends their sessions.
 */
export function removeUserHandler(ctx: UserLifecyclePorts): CallerHandler {
  return async (req, caller) => {
    const userId = req.params[0]!;
    caller.requireActOn(userId, 'user.delete');
    const user = await ctx.orgs.by(caller.by).removeUser(userId, caller.orgId);
    await Promise.all([ctx.clients.by(caller.by).removeMachineCredentials(userId), endSessionsOfUser(ctx, userId)]);
    return ok({ details: changedDetails({ ...user, changedAt: clock.now(), sequence: user.sequence + 1 }, user.orgId) });
  };
}

/**
 * What an administrator does to an existing user (ZITADEL management v1): deactivate, reactivate,
 * lock, unlock, remove, and set a person's password. Deactivating, locking, removing and setting
 * the password end every browser session of the user: their tokens are revoked and the apps that
 * received tokens in them are told by back-channel logout.
 */
export function userLifecycleRoutes(ctx: UserLifecyclePorts): Route[] {
  /** The change, then the end of the user's sessions (durable, with the logouts queued), then the answer. */
  const changeAndEnd = async (caller: Caller, userId: string, change: (orgId: string) => Promise<View<UserRecord>>, endSessions: boolean) => {
    caller.requireActOn(userId, 'user.write');
    const user = await change(caller.orgId);
    if (endSessions) await endSessionsOfUser(ctx, user.id);
    return ok({ details: changedDetails(user, user.orgId) });
  };
  const stateRoute = (action: string, change: (caller: Caller, userId: string, orgId: string) => Promise<View<UserRecord>>, endSessions: boolean) =>
    apiRoute(ctx, `/management/v1/users/:userId/${action}`, {
      POST: (req, caller) => changeAndEnd(caller, req.params[0]!, (orgId) => change(caller, req.params[0]!, orgId), endSessions),
    });
  return [
    stateRoute('_deactivate', (caller, id, org) => ctx.orgs.by(caller.by).deactivateUser(id, org), true),
    stateRoute('_reactivate', (caller, id, org) => ctx.orgs.by(caller.by).reactivateUser(id, org), false),
    stateRoute('_lock', (caller, id, org) => ctx.orgs.by(caller.by).lockUser(id, org), true),
    stateRoute('_unlock', (caller, id, org) => ctx.orgs.by(caller.by).unlockUser(id, org), false),
    apiRoute(ctx, '/management/v1/users/:userId/password', {
      POST: async (req, caller) => {
        const userId = req.params[0]!;
        // Refused before the hash is worked out: a machine user has no password to set.
        const user = caller.requireActOn(userId, 'user.write');
        if (!user.human) throw preconditionFailed('USER-Hum4n', 'only people have a password');
        const input = readBody(req, setHumanPasswordSchema);
        requireComplexPassword(input.password, ctx.orgs.policy('passwordComplexity', user.orgId).policy);
        const hash = await ctx.pool.hashPassword(input.password);
        const changed = await ctx.orgs.by(caller.by).setPassword(userId, caller.orgId, hash, !input.noChangeRequired);
        await afterNewPassword(ctx, changed);
        return ok({ details: changedDetails(changed, changed.orgId) });
      },
    }),
  ];
}
