import type { AppContext } from '../http/context.js';
import type { Request, Route } from '../http/types.js';
import { ApiError } from '../model/errors.js';
import { Deadline } from '../migration/deadline.js';
import { Exporter } from '../migration/exporter.js';
import { readObject, writeObject } from '../migration/gcs.js';
import { Importer } from '../migration/importer.js';
import { exportRequestSchema, gcsLocation, parseImportRequest, parseTimeout } from '../migration/request.js';
import { bundleOrgs, scanDocument } from '../migration/source.js';
import { log } from '../util/log.js';
import { authenticateCaller, type Caller } from './caller.js';
import { apiRoute, ok } from './endpoint.js';
import { validate } from './validation.js';
import { parseJsonObject } from './json.js';

/**
 * The admin API's ExportData and ImportData (`POST /admin/v1/export`, `POST /admin/v1/import`):
 * moving organizations between Sesame instances and from ZITADEL. Only an instance owner
 * (IAM_OWNER) may call them; the import authenticates before its body (up to 512 MiB) is read.
 */
export const IMPORT_MAX_BODY = 512 * 1024 * 1024;
/** The largest bundle read from cloud object storage. */
const GCS_MAX_BUNDLE = IMPORT_MAX_BODY;
/** Without a timeout an export may run this long. */
const DEFAULT_EXPORT_TIMEOUT_MS = 60 * 60 * 1000;

const PERMISSION = 'iam.write';

function requireInstanceOwner(caller: Caller): void {
  caller.require(PERMISSION, {});
}

/** One import at a time: imports check and then write, and must not interleave. */
class Serializer {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

export function migrationRoutes(ctx: AppContext): Route[] {
  const imports = new Serializer();

  const exportRoute = apiRoute(ctx, '/admin/v1/export', {
    POST: async (req, caller) => {
      requireInstanceOwner(caller);
      const input = validate(exportRequestSchema, parseJsonObject(req.body));
      const timeoutMs = parseTimeout(input.timeout, false) ?? DEFAULT_EXPORT_TIMEOUT_MS;
      if (input.localOutput !== undefined || input.s3Output !== undefined) {
        throw new ApiError('Unimplemented', 'EXPORT-0ut01', 'localOutput and s3Output are not supported: Sesame exports into the response (responseOutput) or to cloud object storage (gcsOutput)');
      }
      const gcs = input.gcsOutput === undefined ? undefined : gcsLocation(input.gcsOutput, 'gcsOutput');
      const deadline = new Deadline(timeoutMs, 'export');
      const exporter = new Exporter(input, ctx.masterKey);
      await ctx.migration.walkSnapshot(exporter, deadline);
      const bundle = exporter.toBuffer();
      deadline.check();
      if (gcs) await writeObject(gcs, bundle, deadline);
      log.info('export finished', { bytes: bundle.length, gcs: gcs ? `gs://${gcs.bucket}/${gcs.path}` : undefined, caller: caller.user.id });
      // Without an output option the bundle is the response, as ZITADEL always answers.
      if (input.responseOutput || !gcs) {
        return { status: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }, body: bundle };
      }
      return ok({});
    },
  });

  const importRoute = apiRoute(ctx, '/admin/v1/import', {
    POST: async (req, caller) => {
      requireInstanceOwner(caller);
      const request = parseImportRequest(req.body);
      const deadline = new Deadline(request.timeoutMs, 'import');
      const report = await imports.run(async () => {
        deadline.check('nothing was imported');
        const { data } = request;
        let orgs;
        if (data.kind === 'gcs') {
          const bytes = await readObject(data.location, deadline, GCS_MAX_BUNDLE);
          const { scanner, root } = scanDocument(bytes, `gs://${data.location.bucket}/${data.location.path}`);
          orgs = bundleOrgs(scanner, root, data.field, data.v1);
        } else {
          orgs = bundleOrgs(data.scanner, data.span, data.field, data.v1);
        }
        const importer = new Importer(
          {
            orgs: ctx.orgs,
            clients: ctx.clients,
            masterKey: ctx.masterKey,
            hashPassword: (password) => ctx.pool.hashPassword(password),
            commit: (batch) => ctx.migration.commit(batch),
          },
          deadline,
        );
        return importer.run(orgs);
      });
      log.info('import finished', { orgs: report.orgs.length, errors: report.errors.length, caller: caller.user.id });
      return ok(report.toJSON());
    },
  });

  return [
    exportRoute,
    {
      ...importRoute,
      maxBody: IMPORT_MAX_BODY,
      // 401/403 before a body of hundreds of megabytes is uploaded.
      beforeBody: (req: Request) => requireInstanceOwner(authenticateCaller(ctx, req)),
    },
  ];
}
