import { DEFAULT_POLICIES } from '../model/records.js';
import { formatProtoDuration } from '../util/duration.js';

/** The instance-default login-policy lifetimes, which overwrite a v1 login policy's (docs/compatibility.md §1.5). */
const DEFAULT_LIFETIMES = {
  passwordCheckLifetime: formatProtoDuration(DEFAULT_POLICIES.login.passwordCheckLifetimeMs),
  externalLoginCheckLifetime: formatProtoDuration(DEFAULT_POLICIES.login.externalLoginCheckLifetimeMs),
  mfaInitSkipLifetime: formatProtoDuration(DEFAULT_POLICIES.login.mfaInitSkipLifetimeMs),
  secondFactorCheckLifetime: formatProtoDuration(DEFAULT_POLICIES.login.secondFactorCheckLifetimeMs),
  multiFactorCheckLifetime: formatProtoDuration(DEFAULT_POLICIES.login.multiFactorCheckLifetimeMs),
};

const FLOW_TYPES: Record<string, string> = { FLOW_TYPE_UNSPECIFIED: '0', FLOW_TYPE_EXTERNAL_AUTHENTICATION: '1' };
const TRIGGER_TYPES: Record<string, string> = {
  TRIGGER_TYPE_UNSPECIFIED: '0',
  TRIGGER_TYPE_POST_AUTHENTICATION: '1',
  TRIGGER_TYPE_PRE_CREATION: '2',
  TRIGGER_TYPE_POST_CREATION: '3',
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `iamPolicy {orgId, userLoginMustBeDomain}` becomes `domainPolicy` with the instance defaults. */
export function v1DomainPolicy(iamPolicy: unknown): unknown {
  if (!isObj(iamPolicy)) return iamPolicy;
  return { ...iamPolicy, validateOrgDomains: false, smtpSenderAddressMatchesInstanceDomain: false };
}

/** The org-level `secondFactors`, `multiFactors` and `idps` join the login policy; lifetimes are the defaults. */
export function v1LoginPolicy(loginPolicy: unknown, secondFactors: unknown, multiFactors: unknown, idps: unknown): unknown {
  if (loginPolicy !== undefined && !isObj(loginPolicy)) return loginPolicy;
  const merged: Obj = { ...(loginPolicy ?? {}), ...DEFAULT_LIFETIMES };
  if (Array.isArray(secondFactors)) merged.secondFactors = secondFactors.map((f) => (isObj(f) ? f.type : f));
  if (Array.isArray(multiFactors)) merged.multiFactors = multiFactors.map((f) => (isObj(f) ? f.type : f));
  if (Array.isArray(idps)) merged.idps = idps;
  return merged;
}

/** v1 trigger actions name their flow and trigger types; the current format has numeric strings. */
export function v1TriggerAction(element: unknown): unknown {
  if (!isObj(element)) return element;
  const flow = element.flowType;
  const trigger = element.triggerType;
  return {
    ...element,
    flowType: typeof flow === 'string' ? (FLOW_TYPES[flow] ?? flow) : flow,
    triggerType: typeof trigger === 'string' ? (TRIGGER_TYPES[trigger] ?? trigger) : trigger,
  };
}

/**
 * Converts a whole v1 org object (used for small orgs and tests; large bundles convert field by field).
 *
 * The v1 bundle (`dataOrgsv1`, docs/compatibility.md §1.5) differs from the current DataOrg in a few fields; the
 * helpers here convert a v1 org's fields and elements as they are read.
 */
export function convertV1Org(org: Obj): Obj {
  const { iamPolicy, secondFactors, multiFactors, idps, ...rest } = org;
  const out: Obj = { ...rest };
  if (iamPolicy !== undefined) out.domainPolicy = v1DomainPolicy(iamPolicy);
  if (rest.loginPolicy !== undefined || secondFactors !== undefined || multiFactors !== undefined || idps !== undefined) {
    out.loginPolicy = v1LoginPolicy(rest.loginPolicy, secondFactors, multiFactors, idps);
  }
  if (Array.isArray(rest.triggerActions)) out.triggerActions = rest.triggerActions.map(v1TriggerAction);
  return out;
}
