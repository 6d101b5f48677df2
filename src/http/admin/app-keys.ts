import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { notFound, preconditionFailed } from '../../model/errors.js';
import { requireAppAccess } from './apps.js';
import { addedDetails, changedDetails, listDetails } from '../../zitadel/details.js';
import { clock } from '../../util/clock.js';
import { pageOf } from '../../zitadel/list-query.js';
import type { AppKeyRecord, AppRecord } from '../../model/records.js';
import type { View } from '../../util/readonly.js';
import { apiRoute, ok, okSecret } from './endpoint.js';
import { addKeySchema, appKeyFile, keyView, listKeysSchema } from '../../zitadel/keys.js';
import { readBody } from '../../zitadel/validation.js';
import type { CallerPorts } from './caller.js';
import type { AppsPorts } from './apps.js';

/** What this module uses of the wired parts (src/app.ts). */
export type AppKeysPorts = Pick<Ports, 'clients'> & CallerPorts & AppsPorts;

/** App keys for private_key_jwt: AddAppKey, GetAppKey, ListAppKeys and RemoveAppKey. */
const PRIVATE_KEY_JWT = ['OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT', 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT'];

function requireAppKey(ctx: AppKeysPorts, app: View<AppRecord>, keyId: string): View<AppKeyRecord> {
  const key = ctx.clients.getAppKey(keyId);
  if (!key || key.appId !== app.id) throw notFound('APP-K3y01', `key ${keyId} not found`);
  return key;
}

export function appKeyRoutes(ctx: AppKeysPorts): Route[] {
  return [
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/:appId/keys', {
      POST: async (req, caller) => {
        const app = requireAppAccess(ctx, caller, req, 'project.app.write');
        const method = app.oidc?.authMethodType ?? app.api?.authMethodType ?? '';
        // As in ZITADEL: keys only make sense for an app that authenticates with them.
        if (!PRIVATE_KEY_JWT.includes(method)) {
          throw preconditionFailed('APP-Dff54', 'the application does not use private_key_jwt (Errors.Project.App.AuthMethodNoPrivateKeyJWT)');
        }
        const input = readBody(req, addKeySchema);
        const { key, privateKeyPem } = await ctx.clients.by(caller.by).addAppKey(app, { expirationDate: input.expirationDate, publicKeyPem: input.publicKey });
        return okSecret({
          id: key.id,
          details: addedDetails(key, key.orgId),
          keyDetails: privateKeyPem ? appKeyFile(key, privateKeyPem) : undefined,
        });
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/:appId/keys/_search', {
      POST: (req, caller) => {
        const app = requireAppAccess(ctx, caller, req, 'project.app.read');
        const { query } = readBody(req, listKeysSchema);
        const keys = ctx.clients.appKeysOf(app.id);
        return ok({ details: listDetails(keys.length), result: pageOf(keys, query).map(keyView) });
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/:appId/keys/:keyId', {
      GET: (req, caller) => {
        const app = requireAppAccess(ctx, caller, req, 'project.app.read');
        return ok({ key: keyView(requireAppKey(ctx, app, req.params[2]!)) });
      },
      DELETE: async (req, caller) => {
        const app = requireAppAccess(ctx, caller, req, 'project.app.write');
        const key = requireAppKey(ctx, app, req.params[2]!);
        await ctx.clients.by(caller.by).removeAppKey(key.id);
        return ok({ details: changedDetails({ ...key, changedAt: clock.now(), sequence: key.sequence + 1 }, key.orgId) });
      },
    }),
  ];
}
