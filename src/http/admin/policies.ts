import { clock } from '../../util/clock.js';
import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { LockoutPolicy, LoginPolicy, PolicyKind, PolicyRecord } from '../../model/records.js';
import { addedDetails, changedDetails, rfc3339, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok, type CallerHandler } from './endpoint.js';
import { invalidArgument } from '../../model/errors.js';
import { loginPolicySchema, loginPolicyView, toLoginPolicy } from '../../zitadel/login-policy.js';
import { flag, readBody, uint64 } from '../../zitadel/validation.js';
import type { CallerPorts } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type PoliciesPorts = Pick<Ports, 'orgs'> & CallerPorts;

/**
 * The org lockout and login policies the login UI enforces (ZITADEL management v1):
 * GET / POST (add custom) / PUT (update custom) / DELETE (reset to default) on
 * `/management/v1/policies/lockout` and `/management/v1/policies/login`.
 */
const lockoutSchema = z.object({ maxPasswordAttempts: uint64(), maxOtpAttempts: uint64(), showLockoutFailure: flag() });

/** The login policy: what Sesame cannot enforce is refused, naming the fields. */
const loginSchema = loginPolicySchema.transform((input) => {
  const { policy, unsupported } = toLoginPolicy(input);
  if (unsupported.length > 0) throw invalidArgument('POLICY-Uns1p', `not supported by Sesame: ${unsupported.join('; ')}`);
  return policy;
});

function lockoutView(policy: LockoutPolicy) {
  return {
    maxPasswordAttempts: policy.maxPasswordAttempts ? String(policy.maxPasswordAttempts) : undefined,
    maxOtpAttempts: policy.maxOtpAttempts ? String(policy.maxOtpAttempts) : undefined,
    showLockoutFailure: policy.showLockoutFailure || undefined,
  };
}

function policyRoutes<K extends PolicyKind>(
  ctx: PoliciesPorts,
  kind: K,
  schema: z.ZodType<K extends 'lockout' ? LockoutPolicy : LoginPolicy>,
  view: (policy: K extends 'lockout' ? LockoutPolicy : LoginPolicy) => object,
): Route {
  type P = K extends 'lockout' ? LockoutPolicy : LoginPolicy;
  const write = (create: boolean): CallerHandler => async (req, caller) => {
    caller.require('policy.write');
    caller.requireActOnPeopleOf(caller.orgId);
    const policy = readBody(req, schema) as P;
    const record = (await ctx.orgs.setPolicy(kind, caller.orgId, policy as never, create)) as PolicyRecord;
    return ok({ details: create ? addedDetails(record, caller.orgId) : changedDetails(record, caller.orgId) });
  };
  return apiRoute(ctx, `/management/v1/policies/${kind}`, {
    GET: (_req, caller) => {
      caller.require('policy.read');
      ctx.orgs.requireOrg(caller.orgId);
      const { policy, record } = ctx.orgs.policy(kind, caller.orgId);
      return ok({
        policy: {
          ...(record ? { details: viewDetails(record, caller.orgId) } : {}),
          ...view(policy as P),
          isDefault: record === undefined,
        },
      });
    },
    POST: write(true),
    PUT: write(false),
    DELETE: async (_req, caller) => {
      caller.require('policy.delete');
      caller.requireActOnPeopleOf(caller.orgId);
      await ctx.orgs.removePolicy(kind, caller.orgId);
      return ok({ details: { sequence: '0', changeDate: rfc3339(clock.now()), resourceOwner: caller.orgId } });
    },
  });
}

export function policyRoutesAll(ctx: PoliciesPorts): Route[] {
  return [policyRoutes(ctx, 'lockout', lockoutSchema, lockoutView), policyRoutes(ctx, 'login', loginSchema as unknown as z.ZodType<LoginPolicy>, loginPolicyView)];
}
