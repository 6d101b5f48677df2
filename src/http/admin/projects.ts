import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { ProjectRecord } from '../../model/records.js';
import type { Caller } from './caller.js';
import { addedDetails, changedDetails, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { nonZero } from '../../zitadel/enums.js';
import { addProjectSchema } from '../../zitadel/projects.js';
import { list, readBody } from '../../zitadel/validation.js';
import { listDetails } from '../../zitadel/details.js';
import { listQuerySchema, oneQueryOf, pageOf, sortedBy, textMatches, textQuery } from '../../zitadel/list-query.js';
import { z } from 'zod';
import type { CallerPorts } from './caller.js';
import { preconditionFailed } from '../../model/errors.js';
import { clock } from '../../util/clock.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type ProjectsPorts = Pick<Ports, 'orgs' | 'clients'> & CallerPorts;

/** The instance's management project is Sesame's own (its console and APIs): not removed, deactivated or stripped of roles. */
export function refuseManagementProjectChange(projectId: string, managementProjectId: string): void {
  if (projectId === managementProjectId) throw preconditionFailed('PROJECT-Mgmt2', "the instance's management project is Sesame's own: it cannot be removed, deactivated or lose its roles");
}

/**
 * Checks `permission` on the project (org or project membership) and returns it; a project of
 * another org than the caller's org context is not found.
 */
export function requireProjectAccess(ctx: Pick<ProjectsPorts, 'orgs'>, caller: Caller, projectId: string, permission: string): View<ProjectRecord> {
  caller.require(permission, { orgId: caller.orgId, projectId });
  return ctx.orgs.requireProject(projectId, caller.orgId);
}

/**
 * The body of AddProject and UpdateProject, with branding refused (Sesame has one look). Resource
 * URIs are one namespace for the whole instance, and a token for a URI is accepted by whatever API
 * answers there: setting them takes an instance role (`iam.write`), so one organization's admin
 * cannot claim another tenant's API.
 */
function projectSettings(req: Parameters<typeof readBody>[0], caller: Caller) {
  const input = readBody(req, addProjectSchema);
  if (input.resourceUris !== undefined) caller.require('iam.write', {});
  return input;
}

/** ListProjectsRequest: `{query, queries}` with name and id filters. */
const projectQuerySchema = oneQueryOf({ nameQuery: textQuery('name'), projectResourceOwnerQuery: z.object({ resourceOwner: z.string().max(200) }).strict() });
const listProjectsSchema = z.object({ query: listQuerySchema, queries: list(projectQuerySchema).refine((q) => q.length <= 20, 'at most 20 queries') }).strict();

function projectView(project: View<ProjectRecord>) {
  return {
    id: project.id,
    details: viewDetails(project, project.orgId),
    name: project.name,
    state: project.state,
    projectRoleAssertion: project.projectRoleAssertion,
    projectRoleCheck: project.projectRoleCheck,
    hasProjectCheck: project.hasProjectCheck,
    privateLabelingSetting: nonZero(project.privateLabelingSetting),
    resourceUris: project.resourceUris ?? [],
  };
}

/**
 * Projects: AddProject, GetProjectByID, UpdateProject, DeactivateProject, ReactivateProject and
 * RemoveProject (refused while the project has apps: they are removed first, each ending what it
 * obtained). Roles are in project-roles.ts.
 */
export function projectRoutes(ctx: ProjectsPorts): Route[] {
  return [
    apiRoute(ctx, '/management/v1/projects', {
      POST: async (req, caller) => {
        caller.require('project.create');
        const input = projectSettings(req, caller);
        const project = await ctx.orgs.by(caller.by).addProject(caller.orgId, input);
        return ok({ id: project.id, details: addedDetails(project, project.orgId) });
      },
    }),
    // ListProjects: the org's projects the caller may read (an org role reads all, a project role its own).
    apiRoute(ctx, '/management/v1/projects/_search', {
      POST: (req, caller) => {
        const input = readBody(req, listProjectsSchema);
        const matching = ctx.orgs
          .projectsOfOrg(caller.orgId)
          .filter(
            (project) =>
              caller.can('project.read', { orgId: caller.orgId, projectId: project.id }) &&
              input.queries.every((query) =>
                query.nameQuery ? textMatches(project.name, query.nameQuery.name, query.nameQuery.method) : project.orgId === query.projectResourceOwnerQuery!.resourceOwner,
              ),
          );
        const sorted = sortedBy(matching, (project) => project.createdAt);
        return ok({ details: listDetails(sorted.length), result: pageOf(sorted, input.query).map(projectView) });
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId', {
      GET: (req, caller) => {
        return ok({ project: projectView(requireProjectAccess(ctx, caller, req.params[0]!, 'project.read')) });
      },
      PUT: async (req, caller) => {
        requireProjectAccess(ctx, caller, req.params[0]!, 'project.write');
        const project = await ctx.orgs.by(caller.by).updateProject(req.params[0]!, caller.orgId, projectSettings(req, caller));
        return ok({ details: changedDetails(project, project.orgId) });
      },
      DELETE: async (req, caller) => {
        const project = requireProjectAccess(ctx, caller, req.params[0]!, 'project.delete');
        refuseManagementProjectChange(project.id, ctx.instance.managementProjectId);
        const apps = ctx.clients.appsOfProject(project.id).length;
        if (apps > 0)
          throw preconditionFailed('PROJECT-Apps1', `the project has ${apps} application${apps === 1 ? '' : 's'}: remove ${apps === 1 ? 'it' : 'them'} first (each ends the tokens it obtained)`);
        const removed = await ctx.orgs.by(caller.by).removeProject(project.id, project.orgId);
        return ok({ details: changedDetails({ ...removed, changedAt: clock.now(), sequence: removed.sequence + 1 }, removed.orgId) });
      },
    }),
    ...(['_deactivate', '_reactivate'] as const).map((action) =>
      apiRoute(ctx, `/management/v1/projects/:projectId/${action}`, {
        POST: async (req, caller) => {
          const project = requireProjectAccess(ctx, caller, req.params[0]!, 'project.write');
          refuseManagementProjectChange(project.id, ctx.instance.managementProjectId);
          const state = action === '_deactivate' ? 'PROJECT_STATE_INACTIVE' : 'PROJECT_STATE_ACTIVE';
          const changed = await ctx.orgs.by(caller.by).setProjectState(project.id, project.orgId, state);
          return ok({ details: changedDetails(changed, changed.orgId) });
        },
      }),
    ),
  ];
}
