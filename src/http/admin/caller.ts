import type { Editor } from '../../model/activity.js';
import { bearerToken } from '../../protocol/bearer.js';
import { ApiError } from '../../model/errors.js';
import type { UserRecord } from '../../model/records.js';
import type { FlowView } from '../../services/ports.js';
import type { Request } from '../types.js';
import type { View } from '../../util/readonly.js';
import { hasPermission, type UserAction } from '../../domain/permissions.js';
import { permissionTarget } from '../../domain/management-project.js';
import { RECENT_SIGN_IN_SECONDS, SIGN_IN_AGAIN, signedInRecently, type TokenSignIn } from '../../domain/recent-sign-in.js';
import { clock } from '../../util/clock.js';
import { missingToActOnUser, tokenPowerStands, type TokenPowerPorts } from '../../services/token-power.js';

/**
 * What this module uses of the wired parts (src/app.ts). Reads only: who calls is answered from
 * any thread's copy of the directory (an upload's precheck runs on every thread).
 */
export type CallerPorts = Pick<FlowView, 'instance' | 'orgs' | 'accessTokens'> & TokenPowerPorts;

/**
 * Who is calling the provisioning API: a bearer PAT, or an access token whose audience holds the
 * instance's management project (`urn:zitadel:iam:org:project:id:zitadel:aud`). The org context
 * comes from `x-zitadel-orgid`, defaulting to the caller's own org.
 */
export interface Caller {
  user: UserRecord;
  /** Org the request acts on. */
  orgId: string;
  can(permission: string, target?: { orgId?: string; projectId?: string }): boolean;
  /** Throws PermissionDenied (403) unless the caller has the permission. */
  require(permission: string, target?: { orgId?: string; projectId?: string }): void;
  /**
   * The user `userId` of the org the request acts on, once the caller may do `action` to it
   * (domain/permissions.ts missingToActOn): else PermissionDenied (403), or NotFound.
   */
  requireActOn(userId: string, action: UserAction): View<UserRecord>;
  /**
   * What governs how the people of an org sign in (its login and lockout policies) acts on each of
   * them: the caller must be able to act on every administrator among them (an org owner may not
   * weaken, or lock out by policy, the instance owners of its org).
   */
  requireActOnPeopleOf(orgId: string): void;
  /** The caller as the activity log's editor of what the request changes: who, through which API, from where. */
  readonly by: Editor;
  /** When the access token's person signed in (domain/recent-sign-in.ts); undefined for a PAT. */
  readonly signIn?: TokenSignIn;
}

/** The API a path belongs to (the editor's `service`): `admin`, `management`, `auth`, `v2`, … */
function serviceOf(path: string): string {
  return /^\/([a-z0-9]+)\//.exec(path)?.[1] ?? 'api';
}

/**
 * Refuses a caller whose token is not of a sign-in of the last minutes (domain/recent-sign-in.ts):
 * `what` takes one (changing where the person's recovery goes, adding a factor).
 */
export function requireRecentSignIn(caller: Caller, what: string): void {
  if (signedInRecently(caller.signIn, clock.seconds())) return;
  throw new ApiError(
    'FailedPrecondition',
    SIGN_IN_AGAIN,
    `sign in again first: ${what} takes a sign-in within the last ${RECENT_SIGN_IN_SECONDS / 60} minutes (OIDC prompt=login or max_age), not a token of an older one, a refreshed one or one acting for you`,
  );
}

export function permissionDenied(missing: string): ApiError {
  return new ApiError('PermissionDenied', 'AUTH-5mWD2', `No matching permissions found (${missing})`);
}

export function unauthenticated(message: string): ApiError {
  return new ApiError('Unauthenticated', 'AUTH-7fs1e', message);
}

export async function authenticateCaller(ctx: CallerPorts, req: Request): Promise<Caller> {
  const header = req.headers.authorization;
  if (!header) throw unauthenticated('authorization header missing');
  if (req.repeatedHeaders.has('authorization')) throw unauthenticated('authorization header repeated');
  const token = bearerToken(header);
  if (token === undefined) throw unauthenticated('invalid authorization header: Bearer token expected');
  let user: UserRecord | undefined = ctx.orgs.authenticatePat(token)?.user;
  let signIn: TokenSignIn | undefined;
  if (!user) {
    const resolved = await ctx.accessTokens.resolve(token);
    // A DPoP-bound token is no bearer token (RFC 9449 §7.2): this API takes no proofs, so it is refused.
    if (resolved?.claims.cnf) throw unauthenticated('the token is DPoP-bound; the management API takes bearer tokens and PATs only');
    if (resolved?.claims.aud.includes(ctx.instance.managementProjectId)) {
      const candidate = ctx.orgs.getUser(resolved.claims.sub);
      // The roles are the user's as they are now: the token's app (and actors) must still be allowed them.
      if (ctx.orgs.isActive(candidate) && tokenPowerStands(ctx, candidate, resolved.claims)) {
        user = candidate;
        signIn = { authTime: resolved.claims.authTime, acting: resolved.claims.act !== undefined };
      }
    }
  }
  if (!user) throw unauthenticated('token invalid or expired');

  const memberships = ctx.orgs.memberships(user.id);
  const headerOrg = req.headers['x-zitadel-orgid'];
  const orgId = headerOrg && headerOrg.length > 0 ? headerOrg : user.orgId;
  const caller: Caller = {
    user,
    orgId,
    by: { userId: user.id, service: serviceOf(req.path), address: req.peer },
    ...(signIn ? { signIn } : {}),
    // Changes to the management project take an instance role (domain/management-project.ts).
    can: (permission, target = { orgId }) => hasPermission(memberships, permission, permissionTarget(permission, target, ctx.instance.managementProjectId)),
    require(permission, target = { orgId }) {
      if (caller.can(permission, target)) return;
      const narrowed = permissionTarget(permission, target, ctx.instance.managementProjectId) !== target;
      throw permissionDenied(narrowed ? `${permission}; the instance's management project is changed by instance administrators only` : permission);
    },
    requireActOn(userId, action) {
      // The permission in the org first: a caller without it learns nothing of who exists there.
      caller.require(action);
      const target = ctx.orgs.requireUser(userId, orgId);
      const missing = missingToActOnUser(ctx, memberships, action, target);
      if (missing) throw permissionDenied(missing);
      return target;
    },
    requireActOnPeopleOf(orgOfPeople) {
      for (const person of ctx.orgs.administratorsIn(orgOfPeople)) {
        const missing = missingToActOnUser(ctx, memberships, 'user.write', person);
        if (missing) throw permissionDenied(`${missing}; the organization's policies govern how ${person.userName} signs in`);
      }
    },
  };
  return caller;
}
