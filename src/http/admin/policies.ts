import { clock } from '../../util/clock.js';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { INSTANCE_POLICY, type LoginPolicy, type PolicyKind, type PolicyRecord } from '../../model/records.js';
import { addedDetails, changedDetails, rfc3339, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok, type CallerHandler } from './endpoint.js';
import type { Caller } from './caller.js';
import { invalidArgument, notFound } from '../../model/errors.js';
import { POLICIES, type OrgPolicyKind, type PolicyDefinition } from '../../zitadel/policies.js';
import { readBody } from '../../zitadel/validation.js';
import type { CallerPorts } from './caller.js';
import type { Request } from '../types.js';

/** What this module uses of the wired parts (src/app.ts). */
export type PoliciesPorts = Pick<Ports, 'orgs' | 'idps'> & CallerPorts;

/** The policies that decide how people sign in: changing them takes the right to act on each person they govern. */
const GOVERNS_SIGN_IN: ReadonlySet<PolicyKind> = new Set(['lockout', 'login', 'passwordComplexity', 'domain', 'notification']);

function parsePolicy<K extends PolicyKind>(req: Request, definition: PolicyDefinition<K>) {
  const { policy, unsupported } = definition.toPolicy(readBody(req, definition.schema));
  if (unsupported.length > 0) throw invalidArgument('POLICY-Uns1p', `not supported by Sesame: ${unsupported.join('; ')}`);
  return policy;
}

/** What a GET answers: the policy in force for `orgId` (INSTANCE_POLICY: the instance default), and whether it is a default. */
function policyBody(ctx: PoliciesPorts, kind: OrgPolicyKind, orgId: string) {
  const { policy, record } = ctx.orgs.policy(kind, orgId);
  const own = orgId === INSTANCE_POLICY ? record !== undefined : ctx.orgs.hasOwnPolicy(kind, orgId);
  return {
    policy: {
      ...(record ? { details: viewDetails(record, record.orgId || undefined) } : {}),
      ...POLICIES[kind].view(policy as never),
      isDefault: orgId === INSTANCE_POLICY || !own,
    },
  };
}

/**
 * A login policy's offered identity providers must exist for its owner (its own or the instance's,
 * as `ownerType` says). ZITADEL's update has no list (it is changed at `…/policies/login/idps`):
 * an update without one keeps the stored list.
 */
function withLoginIdps<P>(ctx: PoliciesPorts, kind: PolicyKind, owner: string, policy: P, create: boolean | 'either'): P {
  if (kind !== 'login') return policy;
  const login = policy as LoginPolicy;
  if (create !== true && !login.idps?.length) {
    const own = ctx.orgs.hasOwnPolicy('login', owner) ? ctx.orgs.policy('login', owner).policy.idps : undefined;
    return { ...login, idps: [...(own ?? [])] } as P;
  }
  for (const entry of login.idps ?? []) {
    const found = ctx.idps.find(entry.idpId, owner);
    if (!found || found.ownerType !== entry.ownerType) throw invalidArgument('POLICY-1dp0s', `idps: identity provider ${entry.idpId} not found as ${entry.ownerType}`);
  }
  return policy;
}

/** The label policy's images and font are set through the assets API: a change of its fields keeps them. */
function withAssets<P>(ctx: PoliciesPorts, kind: PolicyKind, owner: string, policy: P): P {
  if (kind !== 'labelPreview') return policy;
  const { logo, logoDark, icon, iconDark, font } = ctx.orgs.policy('labelPreview', owner).policy;
  const kept = Object.fromEntries(Object.entries({ logo, logoDark, icon, iconDark, font }).filter(([, v]) => v !== undefined));
  return { ...policy, ...kept };
}

function requireWrite(caller: Caller, kind: PolicyKind, orgId: string) {
  if (orgId === INSTANCE_POLICY) {
    // The instance default governs every org: an instance role.
    caller.require('iam.policy.write', {});
    return;
  }
  caller.require('policy.write');
  if (GOVERNS_SIGN_IN.has(kind)) caller.requireActOnPeopleOf(orgId);
}

function orgPolicyRoutes(ctx: PoliciesPorts, definition: PolicyDefinition<OrgPolicyKind>, readKind: OrgPolicyKind = definition.kind): Route {
  const { kind } = definition;
  const write =
    (create: boolean): CallerHandler =>
    async (req, caller) => {
      requireWrite(caller, kind, caller.orgId);
      const policy = withLoginIdps(ctx, kind, caller.orgId, withAssets(ctx, kind, caller.orgId, parsePolicy(req, definition)), create);
      const record = (await ctx.orgs.by(caller.by).setPolicy(kind, caller.orgId, policy as never, create)) as PolicyRecord;
      return ok({ details: create ? addedDetails(record, caller.orgId) : changedDetails(record, caller.orgId) });
    };
  return apiRoute(ctx, `/management/v1/policies/${definition.path}`, {
    GET: (_req, caller) => {
      caller.require('policy.read');
      ctx.orgs.requireOrg(caller.orgId);
      return ok(policyBody(ctx, readKind, caller.orgId));
    },
    POST: write(true),
    PUT: write(false),
    DELETE: async (_req, caller) => {
      caller.require('policy.delete');
      if (GOVERNS_SIGN_IN.has(kind)) caller.requireActOnPeopleOf(caller.orgId);
      await ctx.orgs.by(caller.by).removePolicy(kind, caller.orgId);
      // The label policy in force goes back to the default with its preview.
      if (readKind !== kind && ctx.orgs.hasOwnPolicy(readKind, caller.orgId)) await ctx.orgs.by(caller.by).removePolicy(readKind, caller.orgId);
      return ok({ details: { sequence: '0', changeDate: rfc3339(clock.now()), resourceOwner: caller.orgId } });
    },
  });
}

function instancePolicyRoute(ctx: PoliciesPorts, definition: PolicyDefinition<OrgPolicyKind>, readKind: OrgPolicyKind = definition.kind): Route {
  const { kind } = definition;
  return apiRoute(ctx, `/admin/v1/policies/${definition.path}`, {
    GET: (_req, caller) => {
      caller.require('iam.policy.read', {});
      return ok(policyBody(ctx, readKind, INSTANCE_POLICY));
    },
    PUT: async (req, caller) => {
      requireWrite(caller, kind, INSTANCE_POLICY);
      const policy = withLoginIdps(ctx, kind, INSTANCE_POLICY, withAssets(ctx, kind, INSTANCE_POLICY, parsePolicy(req, definition)), 'either');
      const record = (await ctx.orgs.by(caller.by).setPolicy(kind, INSTANCE_POLICY, policy as never, 'either')) as PolicyRecord;
      return ok({ details: changedDetails(record, undefined) });
    },
  });
}

/** `…/label/_preview` (the policy as edited) and `…/label/_activate` (the preview goes in force). */
function labelRoutes(ctx: PoliciesPorts, prefix: string, orgOf: (caller: Caller) => string): Route[] {
  return [
    apiRoute(ctx, `${prefix}/label/_preview`, {
      GET: (_req, caller) => {
        const orgId = orgOf(caller);
        if (orgId === INSTANCE_POLICY) caller.require('iam.policy.read', {});
        else caller.require('policy.read');
        return ok(policyBody(ctx, 'labelPreview', orgId));
      },
    }),
    apiRoute(ctx, `${prefix}/label/_activate`, {
      POST: async (_req, caller) => {
        const orgId = orgOf(caller);
        requireWrite(caller, 'label', orgId);
        const own = orgId === INSTANCE_POLICY ? ctx.orgs.policy('labelPreview', orgId).record !== undefined : ctx.orgs.hasOwnPolicy('labelPreview', orgId);
        if (!own) throw notFound('POLICY-3kd9f', 'there is no label policy to activate (Errors.Org.LabelPolicy.NotFound)');
        const preview = ctx.orgs.policy('labelPreview', orgId).policy;
        const record = (await ctx.orgs.by(caller.by).setPolicy('label', orgId, { ...preview }, 'either', true)) as PolicyRecord;
        return ok({ details: changedDetails(record, orgId || undefined) });
      },
    }),
  ];
}

/**
 * The routes of the org policies (src/zitadel/policies.ts): ZITADEL management v1 for an org's own
 * policy — GET, POST (add), PUT (update), DELETE (back to the default) on
 * `/management/v1/policies/<path>` — and admin v1 for the instance's default (GET, PUT on
 * `/admin/v1/policies/<path>`). The label policy is edited as a preview (`…/label/_preview`) and
 * put in force by `…/label/_activate`. What Sesame cannot enforce is refused, naming the fields.
 */
export function policyRoutesAll(ctx: PoliciesPorts): Route[] {
  const editable = (Object.values(POLICIES) as PolicyDefinition<OrgPolicyKind>[]).filter((d) => d.kind !== 'label');
  const readKind = (d: PolicyDefinition<OrgPolicyKind>): OrgPolicyKind => (d.kind === 'labelPreview' ? 'label' : d.kind);
  return [
    ...labelRoutes(ctx, '/management/v1/policies', (caller) => caller.orgId),
    ...labelRoutes(ctx, '/admin/v1/policies', () => INSTANCE_POLICY),
    ...editable.map((d) => orgPolicyRoutes(ctx, d, readKind(d))),
    ...editable.map((d) => instancePolicyRoute(ctx, d, readKind(d))),
  ];
}
