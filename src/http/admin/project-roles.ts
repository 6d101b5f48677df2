import type { Caller } from './caller.js';
import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { ProjectRole } from '../../model/records.js';
import { changedDetails, listDetails, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { refuseManagementProjectChange, requireProjectAccess } from './projects.js';
import { readBody, requiredText, text } from '../../zitadel/validation.js';
import type { CallerPorts } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type ProjectRolesPorts = Pick<Ports, 'orgs'> & CallerPorts;

/**
 * Project roles: AddProjectRole, BulkAddProjectRoles, ListProjectRoles, RemoveProjectRole (the user
 * grants naming the role lose it in the same commit).
 */
const roleFields = { displayName: text(200), group: text(200) };
const addRoleSchema = z.object({ roleKey: requiredText(200), ...roleFields });
const bulkAddRolesSchema = z.object({
  roles: z.array(z.object({ key: requiredText(200), ...roleFields })).min(1, 'at least one role is required'),
});

export function projectRoleRoutes(ctx: ProjectRolesPorts): Route[] {
  const addRoles = async (caller: Caller, projectId: string, orgId: string, roles: ProjectRole[]) => {
    const project = await ctx.orgs.by(caller.by).addProjectRoles(projectId, orgId, roles);
    return ok({ details: changedDetails(project, project.orgId) });
  };
  return [
    apiRoute(ctx, '/management/v1/projects/:projectId/roles', {
      POST: async (req, caller) => {
        const project = requireProjectAccess(ctx, caller, req.params[0]!, 'project.role.write');
        const { roleKey, displayName, group } = readBody(req, addRoleSchema);
        return addRoles(caller, project.id, project.orgId, [{ key: roleKey, displayName, group }]);
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/roles/_bulk', {
      POST: async (req, caller) => {
        const project = requireProjectAccess(ctx, caller, req.params[0]!, 'project.role.write');
        const { roles } = readBody(req, bulkAddRolesSchema);
        return addRoles(
          caller,
          project.id,
          project.orgId,
          roles.map((r) => ({ key: r.key, displayName: r.displayName, group: r.group })),
        );
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/roles/:roleKey', {
      DELETE: async (req, caller) => {
        const project = requireProjectAccess(ctx, caller, req.params[0]!, 'project.role.delete');
        refuseManagementProjectChange(project.id, ctx.instance.managementProjectId);
        const updated = await ctx.orgs.by(caller.by).removeProjectRole(project.id, project.orgId, req.params[1]!);
        return ok({ details: changedDetails(updated, updated.orgId) });
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/roles/_search', {
      POST: (req, caller) => {
        const project = requireProjectAccess(ctx, caller, req.params[0]!, 'project.role.read');
        return ok({
          details: listDetails(project.roles.length),
          result: project.roles.map((role) => ({
            key: role.key,
            displayName: role.displayName,
            group: role.group,
            details: viewDetails(project, project.orgId),
          })),
        });
      },
    }),
  ];
}
