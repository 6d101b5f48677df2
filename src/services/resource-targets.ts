import type { Ports } from './ports.js';
import type { AppRecord } from '../model/records.js';
import { OAuthError } from '../protocol/errors.js';
import { parseResources, resourceAudience, type ResourceDirectory } from '../protocol/resource-indicators.js';
import type { View } from '../util/readonly.js';

/**
 * Resource indicators (RFC 8707) against Sesame's directory: which resources a request names,
 * whether its client may have them, and the audience of the access tokens they give.
 */
export type ResourceTargetPorts = Pick<Ports, 'orgs' | 'config'>;

export function resourceDirectory(ctx: Pick<Ports, 'orgs'>): ResourceDirectory {
  return { projectOfResource: (uri) => ctx.orgs.projectOfResource(uri) };
}

/**
 * The resources a request names, checked for shape; none when it names none. With the feature
 * off, a `resource` is refused rather than ignored: a token the client believes audience-bound
 * would not be.
 */
export function requestedResources(ctx: Pick<Ports, 'config'>, values: readonly string[]): string[] {
  if (values.length === 0) return [];
  if (!ctx.config.featureResourceIndicators) throw new OAuthError('invalid_target', 'resource indicators (RFC 8707) are turned off on this server');
  return parseResources(values);
}

/** The organization whose projects an app's or machine user's tokens may name as resources. */
export function clientOrgOf(ctx: Pick<Ports, 'orgs'>, app: View<AppRecord>): string {
  return ctx.orgs.requireProject(app.projectId).orgId;
}

/**
 * The audience of an app's user access token limited to `resources`: the resources and their
 * projects replace the default audience (the app's project and its other apps), the client stays
 * first (ZITADEL's shape) and what `:aud` scopes added stays. Without resources, the grant's.
 */
export function userAccessAudience(
  ctx: ResourceTargetPorts,
  app: View<AppRecord>,
  grantAudience: readonly string[],
  defaultAudience: readonly string[],
  resources: readonly string[] | undefined,
): readonly string[] {
  if (!resources?.length) return grantAudience;
  const aud = [app.clientId, ...resourceAudience(resources, resourceDirectory(ctx), clientOrgOf(ctx, app))];
  for (const a of grantAudience) if (!defaultAudience.includes(a) && !aud.includes(a)) aud.push(a);
  return aud;
}
