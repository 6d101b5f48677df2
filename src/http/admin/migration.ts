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
import { importJobState, type ImportJob } from '../../actors/import-jobs.js';
import { ApiError, notFound } from '../../model/errors.js';
import { listDetails, rfc3339 } from '../../zitadel/details.js';
import { clock } from '../../util/clock.js';

/** An import job as the API shows it; `withReport`: ImportData's answer too, once done. */
function importJobView(job: ImportJob, withReport: boolean) {
  return {
    id: job.id,
    state: importJobState(job, clock.now()),
    startedBy: job.by,
    bytes: job.bytes,
    ...job.progress,
    details: { creationDate: rfc3339(job.startedAt), changeDate: rfc3339(job.updatedAt) },
    ...(job.error ? { error: job.error } : {}),
    ...(withReport && job.report ? { report: job.report } : {}),
  };
}

/** What this module uses of the wired parts (src/app.ts). */
export type MigrationPorts = Pick<Ports, 'clients' | 'config' | 'masterKey' | 'migration' | 'importJobs' | 'orgs' | 'pool' | 'notifications'> & CallerPorts;

/**
 * The admin API's ExportData and ImportData (`POST /admin/v1/export`, `POST /admin/v1/import`):
 * moving organizations between Sesame instances and from ZITADEL. Only an instance owner
 * (IAM_OWNER) may call them; the import authenticates before its body (up to 512 MiB) is read.
 * The work itself is src/services/migration/run.ts, shared with the offline `sesame export` / `import`.
 *
 * Sesame adds imports answered before they are over (docs/compatibility.md §1.2): `POST
 * /admin/v1/imports` takes ImportData's request, checks it as ImportData does and answers the job's
 * id once the job is recorded; `GET /admin/v1/imports/{id}` shows its progress, and ImportData's
 * answer once done; `GET /admin/v1/imports` the recent ones. The job runs on the thread that took
 * the request; its record is in the store, so any thread or node answers the polls.
 */
const IMPORT_MAX_BODY = MAX_BUNDLE_BYTES;

const PERMISSION = 'iam.write';

function requireInstanceOwner(caller: Caller): void {
  caller.require(PERMISSION, {});
}

export const IMPORT_PATH = '/admin/v1/import';
export const IMPORT_JOBS_PATH = '/admin/v1/imports';
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

  const startRoute = apiRoute(ctx, IMPORT_JOBS_PATH, {
    POST: async (req, caller) => {
      requireInstanceOwner(caller);
      // A bad request is refused now, as ImportData refuses it; nothing is recorded for it.
      const request = parseImportRequest(req.body);
      // One at a time on this thread, none queued behind it: each holds its bundle (up to 512 MiB) until
      // it is over. (Two sent at the same moment may both be taken; the second then waits its turn.)
      if (imports.busy) throw new ApiError('ResourceExhausted', 'IMPORT-Busy1', 'an import is under way: wait until it is over (GET /admin/v1/imports), then send this one');
      const job = await ctx.importJobs.start(caller.user.id, req.body.length);
      const work = importData(services, request, imports, caller.by, (progress, boundary) => job.progress(progress, boundary));
      work
        .then(
          (report) => {
            log.info('import finished', { job: job.id, orgs: report.orgs.length, errors: report.errors.length, caller: caller.user.id });
            return job.finish({ report: report.toJSON() });
          },
          (error: unknown) => {
            const failure = error instanceof ApiError ? error : new ApiError('Internal', 'IMPORT-Int01', 'internal error');
            if (!(error instanceof ApiError)) log.error('import failed', { job: job.id, error: error instanceof Error ? error.stack : String(error) });
            return job.finish({ error: { code: failure.kind, id: failure.errorId, message: failure.message } });
          },
        )
        .catch((error: unknown) => log.error('import: its outcome was not recorded', { job: job.id, error: String(error) }));
      return ok({ id: job.id });
    },
    GET: async (_req, caller) => {
      requireInstanceOwner(caller);
      const jobs = await ctx.importJobs.recent();
      return ok({ details: listDetails(jobs.length), result: jobs.map((job) => importJobView(job, false)) });
    },
  });
  const jobRoute = apiRoute(ctx, `${IMPORT_JOBS_PATH}/:jobId`, {
    GET: async (req, caller) => {
      requireInstanceOwner(caller);
      const id = req.params[0]!;
      // Ids are ours (util/ids.ts): anything else names no job, and is not looked up.
      const job = /^[0-9]{1,60}$/.test(id) ? await ctx.importJobs.get(id) : undefined;
      if (!job) throw notFound('IMPORT-J0b01', 'import not found');
      return ok({ job: importJobView(job, true) });
    },
  });

  const upload = { maxBody: IMPORT_MAX_BODY, beforeBody: importPrecheck(ctx) };
  return [exportRoute, { ...importRoute, ...upload }, { ...startRoute, ...upload }, jobRoute];
}
