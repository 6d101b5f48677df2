import { z } from 'zod';
import type { Route } from '../types.js';
import { endSessions, type SessionEndPorts } from '../../services/session-end.js';
import { ApiError, notFound } from '../../model/errors.js';
import type { UserRecord } from '../../model/records.js';
import type { View } from '../../util/readonly.js';
import type { UserSession } from '../../actors/user-sessions.js';
import { clock } from '../../util/clock.js';
import { listDetails, rfc3339 } from '../../zitadel/details.js';
import { listQuerySchema, oneQueryOf, pageOf } from '../../zitadel/list-query.js';
import { list, readBody, requiredText } from '../../zitadel/validation.js';
import { apiRoute, ok } from './endpoint.js';
import { requireUserAccess, type UsersPorts } from './users.js';
import type { Caller } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type SessionsPorts = UsersPorts & SessionEndPorts;

/**
 * ZITADEL's session API (v2) on people's browser sessions: ListSessions of one person (a query by
 * user id is required: sessions are found by their person), and DeleteSession, of one's own or of
 * a person the caller may act on (`user.write`, the same right as locking them). Ending a session
 * revokes its tokens and tells the apps it gave tokens to (back-channel logout).
 */
const listSessionsSchema = z
  .object({
    query: listQuerySchema,
    queries: list(oneQueryOf({ userIdQuery: z.object({ id: requiredText(200) }).strict() })).refine((q) => q.length === 1, 'give exactly one userIdQuery: sessions are listed per person'),
  })
  .strict();

/** A session as ZITADEL's v2 API answers it: when, and whose (the user factor). */
function sessionView(ctx: SessionsPorts, user: View<UserRecord>, session: View<UserSession>) {
  return {
    id: session.id,
    creationDate: rfc3339(session.createdAt),
    changeDate: rfc3339(session.lastActiveAt),
    factors: {
      user: {
        verifiedAt: rfc3339(session.authTime * 1000),
        id: user.id,
        loginName: ctx.orgs.preferredLoginName(user),
        displayName: user.human?.profile.displayName ?? '',
        organizationId: user.orgId,
      },
    },
  };
}

export function sessionRoutes(ctx: SessionsPorts): Route[] {
  return [
    apiRoute(ctx, '/v2/sessions/search', {
      POST: async (req, caller) => {
        const input = readBody(req, listSessionsSchema);
        const user = requireUserAccess(ctx, caller, input.queries[0]!.userIdQuery!.id, 'user.read');
        const sessions = (await ctx.userSessions.ofUser(user.id)).sort((a, b) => a.createdAt - b.createdAt);
        return ok({ details: listDetails(sessions.length), sessions: pageOf(sessions, input.query).map((s) => sessionView(ctx, user, s)) });
      },
    }),
    apiRoute(ctx, '/v2/sessions/:sessionId', {
      DELETE: async (req, caller) => {
        const id = req.params[0]!;
        const session = id.length <= 200 ? await ctx.userSessions.get(id) : undefined;
        // A session of someone the caller may not act on is not found: its existence is theirs.
        if (!session || !mayEnd(caller, session.userId)) throw notFound('SESSION-0r2nd', `session ${req.params[0]} not found`);
        await endSessions(ctx, [session], { address: req.peer });
        return ok({ details: { changeDate: rfc3339(clock.now()), resourceOwner: caller.user.orgId } });
      },
    }),
  ];
}

/** One's own sessions, or those of a person the caller may act on (as locking them would end them). */
function mayEnd(caller: Caller, userId: string): boolean {
  if (userId === caller.user.id) return true;
  try {
    caller.requireActOn(userId, 'user.write');
    return true;
  } catch (error) {
    // Refused (PermissionDenied) or not in the org acted on (NotFound): either way not this caller's to end.
    if (error instanceof ApiError) return false;
    throw error;
  }
}
