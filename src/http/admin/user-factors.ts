import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { changedDetails } from '../../zitadel/details.js';
import { endSessionsOfUser, type SessionEndPorts } from '../../services/session-end.js';
import { apiRoute, ok } from './endpoint.js';
import type { CallerPorts } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UserFactorsPorts = Pick<Ports, 'orgs'> & SessionEndPorts & CallerPorts;

/**
 * Codes by email as a person's second factor (ZITADEL user v2 `…/otp_email`; management v1
 * removes it at `…/auth_factors/otp_email`). Adding needs a verified address; both take the right
 * to act on the person. Removing a factor ends the person's sessions, as what it guarded is weaker.
 */
export function userFactorRoutes(ctx: UserFactorsPorts): Route[] {
  const remove = async (userId: string) => {
    const user = await ctx.orgs.setOtpEmail(userId, false);
    await endSessionsOfUser(ctx, userId);
    return ok({ details: changedDetails(user!, user!.orgId) });
  };
  return [
    apiRoute(ctx, '/v2/users/:userId/otp_email', {
      POST: async (req, caller) => {
        caller.requireActOn(req.params[0]!, 'user.write');
        const user = await ctx.orgs.setOtpEmail(req.params[0]!, true);
        return ok({ details: changedDetails(user!, user!.orgId) });
      },
      DELETE: (req, caller) => {
        caller.requireActOn(req.params[0]!, 'user.write');
        return remove(req.params[0]!);
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/auth_factors/otp_email', {
      DELETE: (req, caller) => {
        caller.requireActOn(req.params[0]!, 'user.write');
        return remove(req.params[0]!);
      },
    }),
  ];
}
