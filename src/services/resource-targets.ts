import type { FlowView } from './ports.js';
import type { AppRecord, UserRecord } from '../model/records.js';
import { projectAccessDenied } from '../protocol/project-access.js';
import { OAuthError } from '../protocol/errors.js';
import { parseResources, resourceAudience, type ResourceDirectory } from '../protocol/resource-indicators.js';
import type { View } from '../util/readonly.js';

/**
 * Resource indicators (RFC 8707) against Sesame's directory: which resources a request names,
 * whether its client may have them, and the audience of the access tokens they give.
 */
export type ResourceTargetPorts = Pick<FlowView, 'orgs' | 'config'>;

export function resourceDirectory(ctx: Pick<FlowView, 'orgs'>): ResourceDirectory {
  return { projectOfResource: (uri) => ctx.orgs.projectOfResource(uri) };
}

/**
 * The resources a request names, checked for shape; none when it names none. With the feature
 * off, a `resource` is refused rather than ignored: a token the client believes audience-bound
 * would not be.
 */
export function requestedResources(ctx: Pick<FlowView, 'config'>, values: readonly string[]): string[] {
  if (values.length === 0) return [];
  if (!ctx.config.featureResourceIndicators) throw new OAuthError('invalid_target', 'resource indicators (RFC 8707) are turned off on this server');
  return parseResources(values);
}

/** The organization whose projects an app's or machine user's tokens may name as resources. */
export function clientOrgOf(ctx: Pick<FlowView, 'orgs'>, app: View<AppRecord>): string {
  return ctx.orgs.requireProject(app.projectId).orgId;
}

/**
 * The audience of a user's access token limited to `resources`: the resources and their projects
 * replace the default audience (the app's project and its other apps, `defaultAudience`, worked out
 * only then), the client stays first (ZITADEL's shape) and what `:aud` scopes added stays. Without
 * resources, the grant's. Checked when the token is issued, before its code or refresh token is
 * spent: `invalid_target` for a resource no longer registered (or its project inactive), and
 * `invalid_grant` when the user may not use a resource's project (its role and project checks,
 * as for the app's own project).
 */
export function userAccessAudience(
  ctx: ResourceTargetPorts,
  app: View<AppRecord>,
  user: View<UserRecord>,
  grantAudience: readonly string[],
  defaultAudience: () => readonly string[],
  resources: readonly string[] | undefined,
): readonly string[] {
  if (!resources?.length) return grantAudience;
  const aud = [app.clientId, ...resourceAudience(resources, resourceDirectory(ctx), clientOrgOf(ctx, app))];
  for (const id of aud) {
    const project = ctx.orgs.getProject(id);
    const denied = project && projectAccessDenied(project, user, ctx.orgs.grantsOf(user.id));
    if (denied) throw new OAuthError('invalid_grant', `resource of project ${project.name}: ${denied}`);
  }
  const defaults = defaultAudience();
  for (const a of grantAudience) if (!defaults.includes(a) && !aud.includes(a)) aud.push(a);
  return aud;
}
