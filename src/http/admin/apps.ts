import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { invalidArgument, preconditionFailed } from '../../model/errors.js';
import { usesClientSecret, type AppRecord } from '../../model/records.js';
import type { Caller } from './caller.js';
import { addedDetails, changedDetails, listDetails, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok, okSecret } from './endpoint.js';
import { API_AUTH_METHOD_TYPE, enumField, nonZero } from '../../zitadel/enums.js';
import {
  instanceLifetimeLimits,
  LIFETIME_FIELD_NAMES,
  logoutReceiverVouched,
  oidcCompliance,
  oidcConfigFields,
  oidcConfigSchema,
  oidcConfigView,
  refuseSettingsOfFeaturesOff,
  sameOidcConfig,
  toOidcAppConfig,
} from '../../zitadel/oidc-config.js';
import { requireProjectAccess } from './projects.js';
import { readBody, requiredText } from '../../zitadel/validation.js';
import type { ProjectsPorts } from './projects.js';
import type { CallerPorts } from './caller.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type AppsPorts = Pick<Ports, 'clients' | 'config'> & ProjectsPorts & CallerPorts;

/**
 * Applications: AddOIDCApp, AddAPIApp, GetAppByID, ListApps, RemoveApp, UpdateOIDCAppConfig and the two
 * client-secret regenerations. A client secret is shown once, in the response that creates it.
 */
const addOidcAppSchema = z.object({ name: requiredText(200), ...oidcConfigFields });
// Loose: token lifetimes sent for an API app are refused by name, not silently dropped.
const addApiAppSchema = z.object({ name: requiredText(200), authMethodType: enumField(API_AUTH_METHOD_TYPE) }).loose();

/** The app under a project the caller may act on (404 when either is not in the org context). */
export function requireAppAccess(ctx: AppsPorts, caller: Caller, req: { params: readonly string[] }, permission: string): View<AppRecord> {
  const project = requireProjectAccess(ctx, caller, req.params[0]!, permission);
  return ctx.clients.requireApp(req.params[1]!, project.id);
}

/**
 * Whether the caller's instance role lets it write apps (a target without org or project counts
 * only instance memberships): such a caller vouches for the hosts the app's settings name.
 */
const instanceRoleWrites = (caller: Caller) => caller.can('project.app.write', {});

function appView(app: View<AppRecord>) {
  return {
    id: app.id,
    details: viewDetails(app, app.orgId),
    state: app.state,
    name: app.name,
    oidcConfig: app.oidc ? oidcConfigView(app, app.oidc) : undefined,
    apiConfig: app.api ? { clientId: app.clientId, authMethodType: nonZero(app.api.authMethodType) } : undefined,
  };
}

export function appRoutes(ctx: AppsPorts): Route[] {
  const regenerate = async (caller: Caller, app: View<AppRecord>) => {
    const { app: updated, clientSecret } = await ctx.clients.by(caller.by).regenerateSecret(app.id);
    return okSecret({ clientSecret, details: changedDetails(updated, updated.orgId) });
  };
  return [
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/oidc', {
      POST: async (req, caller) => {
        const project = requireProjectAccess(ctx, caller, req.params[0]!, 'project.app.write');
        const { name, ...input } = readBody(req, addOidcAppSchema);
        refuseSettingsOfFeaturesOff(input, ctx.config);
        const byInstance = instanceRoleWrites(caller);
        const oidc = toOidcAppConfig(input, instanceLifetimeLimits(ctx.config), !byInstance);
        const { app, clientSecret } = await ctx.clients.by(caller.by).addApp(project, { name, oidc, logoutReceiverByInstance: byInstance });
        return okSecret({
          appId: app.id,
          details: addedDetails(app, app.orgId),
          clientId: app.clientId,
          clientSecret,
          ...oidcCompliance(oidc),
        });
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/api', {
      POST: async (req, caller) => {
        const project = requireProjectAccess(ctx, caller, req.params[0]!, 'project.app.write');
        const body = readBody(req, addApiAppSchema);
        const lifetime = LIFETIME_FIELD_NAMES.find((field) => field in body);
        if (lifetime) throw invalidArgument('APP-L1fe3', `${lifetime}: token lifetimes are settings of OIDC apps; an API app receives no tokens`);
        const { name, authMethodType } = body;
        const { app, clientSecret } = await ctx.clients.by(caller.by).addApp(project, { name, api: { authMethodType } });
        return okSecret({ appId: app.id, details: addedDetails(app, app.orgId), clientId: app.clientId, clientSecret });
      },
    }),
    // ListApps (no queries: every app of the project, in id order), registered clients included.
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/_search', {
      POST: (req, caller) => {
        const project = requireProjectAccess(ctx, caller, req.params[0]!, 'project.app.read');
        const apps = ctx.clients.appsOfProject(project.id).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        return ok({ details: listDetails(apps.length), result: apps.map(appView) });
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/:appId', {
      GET: (req, caller) => ok({ app: appView(requireAppAccess(ctx, caller, req, 'project.app.read')) }),
      // RemoveApp: the app and its keys (a registered client's registration goes with it).
      DELETE: async (req, caller) => {
        const app = requireAppAccess(ctx, caller, req, 'project.app.delete');
        const removed = await ctx.clients.by(caller.by).removeApp(app.id);
        return ok({ details: changedDetails({ ...removed, changedAt: Date.now() }, removed.orgId) });
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/:appId/oidc_config', {
      PUT: async (req, caller) => {
        const app = requireAppAccess(ctx, caller, req, 'project.app.write');
        if (!app.oidc) throw preconditionFailed('APP-n0t01', 'the application is not an OIDC application (Errors.Project.App.IsNotOIDC)');
        const input = readBody(req, oidcConfigSchema);
        refuseSettingsOfFeaturesOff(input, ctx.config);
        const vouched = logoutReceiverVouched(instanceRoleWrites(caller), app, input.backChannelLogoutUri);
        const oidc = toOidcAppConfig(input, instanceLifetimeLimits(ctx.config), !vouched);
        // The same settings, now vouched for by an instance role, are a change (and how an app stored
        // before Sesame recorded this gets its internal receiver back).
        if (sameOidcConfig(app.oidc, oidc) && vouched === (app.logoutReceiverByInstance === true)) throw preconditionFailed('APP-1m88i', 'no changes (Errors.NoChangesFound)');
        const updated = await ctx.clients.by(caller.by).updateOidcConfig(app.id, oidc, vouched);
        return ok({ details: changedDetails(updated, updated.orgId) });
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/:appId/oidc_config/_generate_client_secret', {
      POST: (req, caller) => {
        const app = requireAppAccess(ctx, caller, req, 'project.app.write');
        if (!app.oidc) throw preconditionFailed('APP-n0t01', 'the application is not an OIDC application (Errors.Project.App.IsNotOIDC)');
        if (!usesClientSecret(app.oidc.authMethodType)) {
          throw preconditionFailed('APP-S3cr1', `auth method ${app.oidc.authMethodType} does not use a client secret`);
        }
        return regenerate(caller, app);
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/:appId/api_config/_generate_client_secret', {
      POST: (req, caller) => {
        const app = requireAppAccess(ctx, caller, req, 'project.app.write');
        if (!app.api) throw preconditionFailed('APP-n0t02', 'the application is not an API application (Errors.Project.App.IsNotAPI)');
        if (!usesClientSecret(app.api.authMethodType)) {
          throw preconditionFailed('APP-S3cr2', `auth method ${app.api.authMethodType} does not use a client secret`);
        }
        return regenerate(caller, app);
      },
    }),
  ];
}
