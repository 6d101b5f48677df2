import type { AuthorizeDirectory } from '../protocol/authorize/validate.js';
import { appIsUsable } from '../domain/usable.js';
import type { Ports } from './ports.js';
import { resourceAudience } from '../protocol/resource-indicators.js';
import { clientOrgOf, requestedResources, resourceDirectory } from './resource-targets.js';

/**
 * What scope and authorization request rules read of the directory: one place for the lookups the
 * authorization, pushed authorization, device authorization and token endpoints share.
 */
export type DirectoryPorts = Pick<Ports, 'clients' | 'instance' | 'orgs' | 'config'>;

/** The project id an `:aud` scope names (`zitadel` → the management project), if it exists. */
export function resolveAudienceProject(ctx: Pick<Ports, 'instance' | 'orgs'>, id: string): string | undefined {
  return id === 'zitadel' ? ctx.instance.managementProjectId : ctx.orgs.getProject(id)?.id;
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
      if (resources.length > 0) resourceAudience(resources, resourceDirectory(ctx), clientOrgOf(ctx, app));
      return resources;
    },
  };
}
