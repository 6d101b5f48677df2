import { passkeysAllowed } from '../../domain/sign-in-policy.js';
import type { Ports } from '../../services/ports.js';
import type { Request, Route } from '../types.js';
import { exportRequestSchema, parseImportRequest } from '../../services/migration/request.js';
import { exportData, importData, Serializer, type MigrationServices, MAX_BUNDLE_BYTES } from '../../services/migration/run.js';
import { log } from '../../util/log.js';
import { authenticateCaller, type Caller } from './caller.js';
import { apiRoute, ok } from './endpoint.js';
import { validate } from '../../zitadel/validation.js';
import { parseJsonObject } from '../../zitadel/json.js';
import type { CallerPorts } from './caller.js';
import { instanceLifetimeLimits } from '../../zitadel/oidc-config.js';

/** What this module uses of the wired parts (src/app.ts). */
export type MigrationPorts = Pick<Ports, 'clients' | 'config' | 'masterKey' | 'migration' | 'orgs' | 'pool' | 'notifications'> & CallerPorts;

/**
 * The admin API's ExportData and ImportData (`POST /admin/v1/export`, `POST /admin/v1/import`):
 * moving organizations between Sesame instances and from ZITADEL. Only an instance owner
 * (IAM_OWNER) may call them; the import authenticates before its body (up to 512 MiB) is read.
 * The work itself is src/services/migration/run.ts, shared with the offline `sesame export` / `import`.
 */
const IMPORT_MAX_BODY = MAX_BUNDLE_BYTES;

const PERMISSION = 'iam.write';

function requireInstanceOwner(caller: Caller): void {
  caller.require(PERMISSION, {});
}

export const IMPORT_PATH = '/admin/v1/import';
export const EXPORT_PATH = '/admin/v1/export';

/** 401/403 before a body of up to 512 MiB is uploaded (also run by an HTTP acceptor thread, which forwards imports). */
export function importPrecheck(ctx: CallerPorts): (req: Request) => Promise<void> {
  return async (req) => requireInstanceOwner(await authenticateCaller(ctx, req));
}

export function migrationRoutes(ctx: MigrationPorts): Route[] {
  const imports = new Serializer();
  const services: MigrationServices = {
    lifetimeLimits: instanceLifetimeLimits(ctx.config),
    managementProjectId: ctx.instance.managementProjectId,
    orgs: ctx.orgs,
    clients: ctx.clients,
    masterKey: ctx.masterKey,
    migration: ctx.migration,
    hashPassword: (password) => ctx.pool.hashPasswordInBulk(password),
    welcome: async (userId, passwordless) => {
      const user = ctx.orgs.getUser(userId);
      // requestPasswordlessRegistration: the person gets a link to register a passkey (ZITADEL's passwordless
      // registration), where their org's login policy allows passkeys; else what anyone imported gets.
      const allowed = user && passkeysAllowed(ctx.orgs.policy('login', user.orgId).policy);
      if (user) await (passwordless && allowed ? ctx.notifications.sendCode(user, 'passwordless') : ctx.notifications.welcome(user));
    },
  };

  const exportRoute = apiRoute(ctx, EXPORT_PATH, {
    POST: async (req, caller) => {
      requireInstanceOwner(caller);
      const input = validate(exportRequestSchema, parseJsonObject(req.body));
      const { bundle, gcs } = await exportData(services, input);
      log.info('export finished', { bytes: bundle.length, gcs: gcs ? `gs://${gcs.bucket}/${gcs.path}` : undefined, caller: caller.user.id });
      // Without an output option the bundle is the response, as ZITADEL always answers.
      if (input.responseOutput || !gcs) {
        return { status: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }, body: bundle };
      }
      return ok({});
    },
  });

  const importRoute = apiRoute(ctx, IMPORT_PATH, {
    POST: async (req, caller) => {
      requireInstanceOwner(caller);
      const report = await importData(services, parseImportRequest(req.body), imports, caller.by);
      log.info('import finished', { orgs: report.orgs.length, errors: report.errors.length, caller: caller.user.id });
      return ok(report.toJSON());
    },
  });

  return [
    exportRoute,
    {
      ...importRoute,
      maxBody: IMPORT_MAX_BODY,
      beforeBody: importPrecheck(ctx),
    },
  ];
}
