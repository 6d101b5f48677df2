import type { ActorClaim } from '../actors/issued-tokens.js';
import { missingToActOn, type UserAction } from '../domain/permissions.js';
import type { View } from '../util/readonly.js';
import type { FlowView } from './ports.js';
import { carriesPowerOf } from '../domain/management-project.js';
import type { AppRecord, MemberRecord, UserRecord } from '../model/records.js';

/** What this module uses of the wired parts (src/app.ts). */
export type TokenPowerPorts = Pick<FlowView, 'clients' | 'instance' | 'orgs' | 'settings'>;

/** Whether the app's tokens may carry this user's administrative power (domain/management-project.ts carriesPowerOf). */
export function appCarriesPowerOf(ctx: Pick<TokenPowerPorts, 'instance' | 'orgs'>, app: View<AppRecord>, userId: string): boolean {
  return carriesPowerOf(app, ctx.instance.managementProjectId, ctx.orgs.memberships(userId), ctx.orgs.orgOfProject);
}

/** What `caller` (its memberships) lacks to do `action` to `user` (domain/permissions.ts missingToActOn), or undefined. */
export function missingToActOnUser(ctx: Pick<TokenPowerPorts, 'orgs'>, caller: readonly View<MemberRecord>[], action: UserAction, user: View<UserRecord>): string | undefined {
  return missingToActOn(caller, action, { orgId: user.orgId, memberships: ctx.orgs.memberships(user.id) }, ctx.orgs.orgOfProject);
}

/**
 * Why `actorId` may not impersonate `subject` now, or undefined: impersonation needs the instance
 * security policy and the actor's right to act on the subject (domain/permissions.ts
 * missingToActOn: the impersonator role in the subject's org, the admin impersonator role in every
 * scope the subject administers; an instance owner only by an instance role).
 */
export function impersonationRefusal(ctx: TokenPowerPorts, actorId: string, subject: View<UserRecord>): string | undefined {
  if (!ctx.settings.securityPolicy().enableImpersonation) return 'impersonation is disabled by the instance security policy';
  const missing = missingToActOnUser(ctx, ctx.orgs.memberships(actorId), 'impersonation', subject);
  return missing && `the actor may not impersonate this user (${missing})`;
}

/** Why an impersonation chain (`act`, nested) no longer stands for `subject`, or undefined: every actor must still be allowed it. */
export function actorChainRefusal(ctx: TokenPowerPorts, subject: View<UserRecord>, act: ActorClaim | undefined): string | undefined {
  for (let actor = act; actor; actor = actor.act) {
    const refused = impersonationRefusal(ctx, actor.sub, subject);
    if (refused) return refused;
  }
  return undefined;
}

/**
 * Whether a token may still be used with its subject's administrative power (the management API):
 * decided at use, not only at issuance, since roles change meanwhile. The app it was issued to must
 * still carry the subject's power (a plain user promoted to instance owner since gives an org's app
 * nothing), and every actor of an impersonation must still be allowed it. A machine user's own token
 * (no app) carries its own power.
 */
export function tokenPowerStands(ctx: TokenPowerPorts, subject: View<UserRecord>, claims: { clientId: string; act?: ActorClaim | undefined }): boolean {
  const app = ctx.clients.appByClient(claims.clientId);
  if (app && !appCarriesPowerOf(ctx, app, subject.id)) return false;
  return actorChainRefusal(ctx, subject, claims.act) === undefined;
}
