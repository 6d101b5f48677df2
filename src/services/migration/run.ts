import { SYSTEM, type Editor } from '../../model/activity.js';
import type { ClientsActor } from '../../actors/clients.js';
import type { OrgsActor } from '../../actors/orgs.js';
import type { LifetimeLimits } from '../../zitadel/oidc-config.js';
import { ApiError } from '../../model/errors.js';
import type { MasterKey } from '../../crypto/master-key.js';
import { Deadline } from './deadline.js';
import { Exporter } from './exporter.js';
import { readObject, writeObject, type GcsLocation } from './gcs.js';
import { Importer, type ImportOptions } from './importer.js';
import { gcsLocation, parseTimeout, type ImportRequest } from './request.js';
import type { ImportReport } from './result.js';
import { bundleOrgs, scanDocument } from './source.js';
import type { MigrationStore, SnapshotVisitor } from './store.js';
import type { z } from 'zod';
import type { exportRequestSchema } from './request.js';

/**
 * ExportData and ImportData themselves, whoever calls them: the admin API (`POST /admin/v1/export`,
 * `POST /admin/v1/import`) and the `sesame export` / `sesame import` commands on a data dir that no
 * server holds. Both hand in the same ZITADEL request, so an offline move follows the same rules.
 */
export interface MigrationServices {
  /** The instance's token lifetimes (apps' own may only be shorter). */
  lifetimeLimits: LifetimeLimits;
  /** The instance's management project: nothing is imported into it. */
  managementProjectId: string;
  orgs: OrgsActor;
  clients: ClientsActor;
  masterKey: MasterKey;
  migration: MigrationStore;
  /** Hashes a plaintext `password` (worker pool). */
  hashPassword(password: string): Promise<string>;
  /** Mails imported people what ZITADEL's import does (an initialization or verification code); absent offline. */
  welcome?(userId: string, passwordless: boolean): Promise<void>;
}

/** The largest bundle an import reads (an inline request body or a cloud storage object: the same bound for both). */
export const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;
/** Without a timeout an export may run this long. */
const DEFAULT_EXPORT_TIMEOUT_MS = 60 * 60 * 1000;

export type ExportRequest = z.output<typeof exportRequestSchema>;

export interface ExportResult {
  bundle: Buffer;
  /** Where the bundle was also written, when the request asked for cloud object storage. */
  gcs?: GcsLocation;
}

/** Reports how many directory records an export has read so far. */
export type ExportProgress = (records: number) => void;

export async function exportData(services: MigrationServices, input: ExportRequest, progress?: ExportProgress): Promise<ExportResult> {
  const timeoutMs = parseTimeout(input.timeout, false) ?? DEFAULT_EXPORT_TIMEOUT_MS;
  if (input.localOutput !== undefined || input.s3Output !== undefined) {
    throw new ApiError('Unimplemented', 'EXPORT-0ut01', 'localOutput and s3Output are not supported: Sesame exports into the response (responseOutput) or to cloud object storage (gcsOutput)');
  }
  const gcs = input.gcsOutput === undefined ? undefined : gcsLocation(input.gcsOutput, 'gcsOutput');
  const deadline = new Deadline(timeoutMs, 'export');
  const exporter = new Exporter(input, services.masterKey);
  await services.migration.walkSnapshot(progress ? counting(exporter, progress) : exporter, deadline);
  const bundle = exporter.toBuffer();
  deadline.check();
  if (gcs) await writeObject(gcs, bundle, deadline);
  return { bundle, gcs };
}

/** A visitor that tells `progress` every so many records before handing each on. */
function counting(visitor: SnapshotVisitor, progress: ExportProgress): SnapshotVisitor {
  let records = 0;
  const wrap =
    <R>(visit: (record: R) => void) =>
    (record: R) => {
      visit(record);
      if (++records % 500 === 0) progress(records);
    };
  return {
    org: wrap((r) => visitor.org(r)),
    policy: wrap((r) => visitor.policy(r)),
    project: wrap((r) => visitor.project(r)),
    app: wrap((r) => visitor.app(r)),
    machineSecret: wrap((r) => visitor.machineSecret(r)),
    user: wrap((r) => visitor.user(r)),
    userGrant: wrap((r) => visitor.userGrant(r)),
    member: wrap((r) => visitor.member(r)),
  };
}

/** One import at a time: imports check and then write, and must not interleave. */
export class Serializer {
  private tail: Promise<unknown> = Promise.resolve();
  private held = 0;

  run<T>(work: () => Promise<T>): Promise<T> {
    this.held++;
    const result = this.tail.then(work, work).finally(() => this.held--);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Whether an import runs or waits here. */
  get busy(): boolean {
    return this.held > 0;
  }
}

/** `by`: who imports (the activity log's editor of every change the import makes); `onProgress`: told how far it is (Importer). */
export async function importData(
  services: MigrationServices,
  request: ImportRequest,
  serializer = new Serializer(),
  by: Editor = SYSTEM,
  onProgress?: ImportOptions['onProgress'],
): Promise<ImportReport> {
  const deadline = new Deadline(request.timeoutMs, 'import');
  return serializer.run(async () => {
    deadline.check('nothing was imported');
    const { data } = request;
    let orgs;
    if (data.kind === 'gcs') {
      const bytes = await readObject(data.location, deadline, MAX_BUNDLE_BYTES);
      const { scanner, root } = scanDocument(bytes, `gs://${data.location.bucket}/${data.location.path}`);
      orgs = bundleOrgs(scanner, root, data.field, data.v1);
    } else {
      orgs = bundleOrgs(data.scanner, data.span, data.field, data.v1);
    }
    const importer = new Importer(
      {
        lifetimeLimits: services.lifetimeLimits,
        managementProjectId: services.managementProjectId,
        orgs: services.orgs.by(by),
        clients: services.clients.by(by),
        masterKey: services.masterKey,
        hashPassword: (password) => services.hashPassword(password),
        ...(services.welcome ? { welcome: services.welcome } : {}),
        begin: () => services.migration.begin(by),
        commit: (batch) => services.migration.commit(batch),
      },
      deadline,
      { addToExistingOrgs: request.addToExistingOrgs, idpIdMap: request.idpIdMap, ...(onProgress ? { onProgress } : {}) },
    );
    return importer.run(orgs);
  });
}
