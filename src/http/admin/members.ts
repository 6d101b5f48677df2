import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { invalidArgument } from '../../model/errors.js';
import type { StoresCopy } from '../../actors/decided-again.js';
import { clock } from '../../util/clock.js';
import type { MemberRecord } from '../../model/records.js';
import type { Caller } from './caller.js';
import { addedDetails, changedDetails, listDetails, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { INSTANCE_ROLES, ORG_ROLES } from '../../domain/permissions.js';
import { readBody, requiredText } from '../../zitadel/validation.js';
import type { CallerPorts } from './caller.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type MembersPorts = Pick<Ports, 'orgs' | 'transactions'> & CallerPorts;

/** Org members (management API) and instance members (admin API): add, list, change roles, remove. */
const addMemberSchema = z.object({
  userId: requiredText(200),
  roles: z.array(z.string()).min(1, 'at least one role is required'),
});
const updateMemberSchema = z.object({ roles: z.array(z.string()).min(1, 'at least one role is required') });

function checkRoles(roles: readonly string[], allowed: readonly string[]): void {
  const unknown = roles.filter((r) => !allowed.includes(r));
  if (unknown.length > 0) {
    throw invalidArgument('MEMBER-4m0sR', `unknown roles ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`);
  }
}

function memberView(ctx: MembersPorts, member: View<MemberRecord>, resourceOwner: string | undefined) {
  const user = ctx.orgs.getUser(member.userId);
  const profile = user?.human?.profile;
  return {
    userId: member.userId,
    roles: member.roles,
    details: viewDetails(member, resourceOwner),
    preferredLoginName: user ? ctx.orgs.preferredLoginName(user) : undefined,
    email: user?.human?.email.email,
    firstName: profile?.firstName,
    lastName: profile?.lastName,
    displayName: profile?.displayName ?? user?.machine?.name,
    userType: user?.human ? 'TYPE_HUMAN' : user?.machine ? 'TYPE_MACHINE' : undefined,
  };
}

interface MemberScope {
  scope: string;
  resourceOwner?: string;
  /** Permission target of the scope. */
  target: { orgId?: string };
  /** Throws NotFound when the scope's org does not exist (checked after the permission). */
  ensureExists(): void;
}

/** Memberships of one scope: `org:<id>` or `instance`. */
function memberRoutes(ctx: MembersPorts, base: string, scopeOf: (caller: Caller) => MemberScope, allowedRoles: readonly string[], permissionPrefix: 'org.member' | 'iam.member'): Route[] {
  return [
    apiRoute(ctx, base, {
      POST: async (req, caller) => {
        const scope = scopeOf(caller);
        caller.require(`${permissionPrefix}.write`, scope.target);
        scope.ensureExists();
        const { userId, roles } = readBody(req, addMemberSchema);
        checkRoles(roles, allowedRoles);
        const member = await ctx.orgs.by(caller.by).addMember(scope.scope, userId, roles);
        return ok({ details: addedDetails(member, scope.resourceOwner) });
      },
    }),
    apiRoute(ctx, `${base}/_search`, {
      POST: (_req, caller) => {
        const scope = scopeOf(caller);
        caller.require(`${permissionPrefix}.read`, scope.target);
        scope.ensureExists();
        const members = ctx.orgs.listMembers(scope.scope);
        return ok({ details: listDetails(members.length), result: members.map((m) => memberView(ctx, m, scope.resourceOwner)) });
      },
    }),
    apiRoute(ctx, `${base}/:userId`, {
      PUT: async (req, caller) => {
        const scope = scopeOf(caller);
        caller.require(`${permissionPrefix}.write`, scope.target);
        scope.ensureExists();
        const userId = req.params[0]!;
        const { roles } = readBody(req, updateMemberSchema);
        checkRoles(roles, allowedRoles);
        const member =
          scope.scope === 'instance'
            ? await ctx.transactions.decide(orgsCopy(ctx), (batch) => ctx.orgs.stageInstanceMembership(userId, roles, batch), caller.by)
            : await ctx.orgs.by(caller.by).changeMemberRoles(scope.scope, userId, roles);
        return ok({ details: changedDetails(member, scope.resourceOwner) });
      },
      DELETE: async (req, caller) => {
        const scope = scopeOf(caller);
        caller.require(`${permissionPrefix}.write`, scope.target);
        scope.ensureExists();
        const userId = req.params[0]!;
        const member =
          scope.scope === 'instance'
            ? await ctx.transactions.decide(orgsCopy(ctx), (batch) => ctx.orgs.stageInstanceMembership(userId, undefined, batch), caller.by)
            : await ctx.orgs.by(caller.by).removeMember(scope.scope, userId);
        return ok({ details: changedDetails({ ...member, changedAt: clock.now(), sequence: member.sequence + 1 }, scope.resourceOwner) });
      },
    }),
  ];
}

/** A decision over memberships is taken again with the newest rows. */
const orgsCopy = (ctx: MembersPorts): StoresCopy => ({ takeChange: (store, id) => ctx.orgs.takeChange(store, id) });

export function orgMemberRoutes(ctx: MembersPorts): Route[] {
  return memberRoutes(
    ctx,
    '/management/v1/orgs/me/members',
    (caller) => ({
      scope: `org:${caller.orgId}`,
      resourceOwner: caller.orgId,
      target: { orgId: caller.orgId },
      ensureExists: () => void ctx.orgs.requireOrg(caller.orgId),
    }),
    ORG_ROLES,
    'org.member',
  );
}

export function instanceMemberRoutes(ctx: MembersPorts): Route[] {
  return memberRoutes(ctx, '/admin/v1/members', () => ({ scope: 'instance', target: {}, ensureExists: () => {} }), INSTANCE_ROLES, 'iam.member');
}
