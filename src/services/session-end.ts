import type { UserSession } from '../actors/user-sessions.js';
import type { View } from '../util/readonly.js';
import type { FlowView } from './ports.js';
import { revocationHorizon } from './user-tokens.js';

/** What this module uses of the wired parts (src/app.ts). */
export type SessionEndPorts = Pick<FlowView, 'config' | 'userSessions' | 'issuedTokens' | 'logoutDeliveries' | 'orgs'>;

/**
 * Ends browser sessions, whatever ends them (end_session, an administrator deactivating, locking
 * or deleting the user or setting their password): the sessions are removed, every token issued
 * in them is revoked, and each app that received tokens in one is queued a back-channel logout.
 * Resolves once all of that is durable; the logouts are delivered in the background.
 */
export async function endSessions(ctx: SessionEndPorts, sessions: readonly View<UserSession>[], signedOutFrom?: { address: string | undefined }): Promise<void> {
  if (sessions.length === 0) return;
  const until = revocationHorizon(ctx);
  await Promise.all([
    // A sign-out is logged with each session's end (the address of the browser that asked).
    ctx.userSessions.end(sessions, signedOutFrom && { address: signedOutFrom.address, orgOf: (userId) => ctx.orgs.getUser(userId)?.orgId ?? '' }),
    ...sessions.map((s) => ctx.issuedTokens.revokeSession(s.id, until)),
    ctx.logoutDeliveries.queue(sessions),
  ]);
}

/** Ends every session of a user, on every browser. */
export async function endSessionsOfUser(ctx: SessionEndPorts, userId: string): Promise<void> {
  return endSessions(ctx, await ctx.userSessions.ofUser(userId));
}
