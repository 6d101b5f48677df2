import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportJobsActor, importJobState, KEEP_MS, NO_PROGRESS, STALL_MS } from '../../src/actors/import-jobs.js';
import { Serializer } from '../../src/services/migration/run.js';
import { openPostgresStore, POSTGRES_DEFAULTS } from '../../src/storage/postgres/connection.js';
import type { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { StorePort } from '../../src/storage/store-port.js';
import { installClock } from '../../src/util/clock.js';
import { postgresCluster } from '../helpers/postgres.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';

/**
 * Imports answered before they are over, as records in the store: a job started on one node is
 * followed from another (PostgreSQL, two pools on one database), and on LMDB; a finished job is
 * kept KEEP_MS; a running one without a heartbeat for STALL_MS reads as interrupted.
 */
let now = 1_800_000_000_000;
let restoreClock: () => void;
let lmdb: TempStorage;
let a: PostgresStore;
let b: PostgresStore;

beforeAll(async () => {
  restoreClock = installClock({ now: () => now });
  lmdb = openTempStorage('import-jobs');
  const url = await (await postgresCluster()).database('import_jobs');
  [a, b] = [await openPostgresStore({ url, ...POSTGRES_DEFAULTS }), await openPostgresStore({ url, ...POSTGRES_DEFAULTS })];
});

afterAll(async () => {
  restoreClock();
  await lmdb?.close();
  await a?.close();
  await b?.close();
});

const progress = { phase: 'orgs' as const, orgsTotal: 4, orgsDone: 2, users: 10, projects: 1, apps: 0, errors: 0 };

describe.each([
  ['LMDB', () => [lmdb.storage.records, lmdb.storage.records] as const],
  ['PostgreSQL, started on one node and followed on another', () => [a, b] as const],
])('import jobs on %s', (_name, stores: () => readonly [StorePort, StorePort]) => {
  it('records the start, the progress at a boundary and the report; the newest listed first', async () => {
    const [here, there] = stores();
    const job = await new ImportJobsActor(here).start('owner', 123);
    expect(await new ImportJobsActor(there).get(job.id)).toMatchObject({ state: 'running', by: 'owner', bytes: 123, progress: NO_PROGRESS });
    job.progress(progress, true);
    now += 1000;
    const later = await new ImportJobsActor(here).start('owner', 1);
    await job.finish({ report: { errors: [], success: { orgs: [{ orgId: 'x' }] } } });
    const done = (await new ImportJobsActor(there).get(job.id))!;
    expect(done).toMatchObject({ state: 'done', progress, report: { success: { orgs: [{ orgId: 'x' }] } } });
    expect(importJobState(done, now)).toBe('done');
    const listed = await new ImportJobsActor(there).recent();
    expect(listed.map((j) => j.id).slice(0, 2)).toEqual([later.id, job.id]);
    await later.finish({ error: { code: 'DeadlineExceeded', id: 'IMPORT-T1me0', message: 'late' } });
    expect(await new ImportJobsActor(there).get(later.id)).toMatchObject({ state: 'failed', error: { message: 'late' } });
  });

  it('reads a running job without a heartbeat as interrupted, and removes jobs KEEP_MS after their last write', async () => {
    const [here, there] = stores();
    const stalled = await new ImportJobsActor(here).start('owner', 1);
    const finished = await new ImportJobsActor(here).start('owner', 1);
    await finished.finish({ report: {} });
    const record = (await new ImportJobsActor(there).get(stalled.id))!;
    expect(importJobState(record, now + STALL_MS)).toBe('running');
    expect(importJobState(record, now + STALL_MS + 1)).toBe('interrupted');
    now += KEEP_MS;
    const beating = await new ImportJobsActor(here).start('owner', 1);
    beating.progress(progress, true);
    now += 1;
    // A new start sweeps both; one that wrote since stays.
    await new ImportJobsActor(there).start('owner', 1);
    await beating.finish({ report: {} });
    expect(await new ImportJobsActor(here).get(finished.id)).toBeUndefined();
    expect(await new ImportJobsActor(here).get(stalled.id)).toBeUndefined();
    expect(await new ImportJobsActor(here).get(beating.id)).toBeDefined();
  });
});

describe('the imports of one thread', () => {
  it('are busy while one runs or waits, and free once all are over, failed ones too', async () => {
    const imports = new Serializer();
    expect(imports.busy).toBe(false);
    let release!: () => void;
    const first = imports.run(() => new Promise<void>((resolve) => (release = resolve)));
    const second = imports.run(() => Promise.reject(new Error('bad bundle')));
    expect(imports.busy).toBe(true);
    // The first starts once the (empty) queue before it is through.
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await first;
    await expect(second).rejects.toThrow('bad bundle');
    expect(imports.busy).toBe(false);
  });
});
