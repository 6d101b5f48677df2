import type { AuthorizeDirectory } from '../protocol/authorize/validate.js';
import { appIsUsable } from '../domain/usable.js';
import type { FlowView } from './ports.js';
import type { AppRecord } from '../model/records.js';
import { OAuthError } from '../protocol/errors.js';
import type { View } from '../util/readonly.js';
import { resourceAudience } from '../protocol/resource-indicators.js';
import { clientOrgOf, requestedResources, resourceDirectory } from './resource-targets.js';

/**
 * What scope and authorization request rules read of the directory: one place for the lookups the
 * authorization, pushed authorization, device authorization and token endpoints share.
 */
export type DirectoryPorts = Pick<FlowView, 'clients' | 'instance' | 'orgs' | 'config'>;

/** The project id an `:aud` scope names (`zitadel` → the management project), if it exists. */
export function resolveAudienceProject(ctx: Pick<FlowView, 'instance' | 'orgs'>, id: string): string | undefined {
  return id === 'zitadel' ? ctx.instance.managementProjectId : ctx.orgs.getProject(id)?.id;
}

/**
 * Whether an app may have tokens for a project's APIs. Any app of the instance may (ZITADEL's
 * `:aud` scopes); a self-registered client, which anyone may have made, only for projects of its
 * own organization, and never for the management API (with a signed-in admin's consent-less
 * session it would get a token for the whole instance).
 */
function audienceAllowed(ctx: DirectoryPorts, projectId: string, app: View<AppRecord>): boolean {
  if (app.registration === undefined) return true;
  return projectId !== ctx.instance.managementProjectId && ctx.orgs.getProject(projectId)?.orgId === clientOrgOf(ctx, app);
}

export function authorizeDirectory(ctx: DirectoryPorts): AuthorizeDirectory {
  return {
    app: (clientId) => {
      const app = ctx.clients.appByClient(clientId);
      return appIsUsable(app, ctx.orgs) ? app : undefined;
    },
    resolveProject: (id) => resolveAudienceProject(ctx, id),
    orgById: (id) => ctx.orgs.getOrg(id),
    orgByDomain: (domain) => ctx.orgs.findOrgByDomain(domain),
    resources: (values, app) => {
      const resources = requestedResources(ctx, values);
      // Checked now, so an unknown resource is answered to the app before the user signs in.
      if (resources.length > 0) {
        // resourceAudience keeps to the client's organization; of audienceAllowed's rules the management API is left.
        const aud = resourceAudience(resources, resourceDirectory(ctx), clientOrgOf(ctx, app));
        if (app.registration && aud.includes(ctx.instance.managementProjectId)) throw new OAuthError('invalid_target', 'this client may not ask for tokens for the management API');
      }
      return resources;
    },
    audienceAllowed: (projectId, app) => audienceAllowed(ctx, projectId, app),
  };
}
