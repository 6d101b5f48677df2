import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthCodesActor, type CodeGrant } from '../../src/actors/auth-codes.js';
import { IssuedTokensActor } from '../../src/actors/issued-tokens.js';
import { RefreshTokensActor } from '../../src/actors/refresh-tokens.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { openStorage, type Storage } from '../../src/storage/db.js';
import { copyDataDirToPostgres, copyPostgresToDataDir, TargetNotEmpty } from '../../src/storage/postgres/copy.js';
import { PostgresDirectory, PostgresDirectoryReader } from '../../src/storage/postgres/directory.js';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { PostgresActivityLog } from '../../src/storage/postgres/activity.js';
import { postgresCluster } from '../helpers/postgres.js';

/**
 * Moving from one node to many: an LMDB data dir copied into an empty PostgreSQL database keeps
 * what people and apps hold: a code still redeems once, an opaque token still resolves, a refresh
 * token still rotates, a revocation still holds, and the directory (with its unique keys) reads the
 * same, and the activity log keeps its events under their numbers. A database that holds Sesame data
 * already is refused.
 */
const masterKey = MasterKey.fromSecret('copy-to-postgres');
let dir: string;
let storage: Storage;
let pool: pg.Pool;
let url: string;

const grant: CodeGrant = { grantId: 'grant-1', clientId: 'app', redirectUri: 'https://app/cb', scopes: ['openid'], audience: ['app'], userId: 'u1', sid: 's1', authTime: 1, amr: ['pwd'] };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sesame-copy-'));
  storage = openStorage(dir, 'commit');
  url = await (await postgresCluster()).database('copy');
  pool = new pg.Pool({ connectionString: url });
});

afterAll(async () => {
  await pool?.end();
  await storage?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('copying a data dir into PostgreSQL', () => {
  it('keeps codes, tokens, refresh families, revocations and the directory, there and back, and refuses a target that is not empty', async () => {
    const seconds = Math.floor(Date.now() / 1000);
    const code = await new AuthCodesActor(storage.records).issue(grant);
    const tokens = new IssuedTokensActor(storage.records);
    const opaque = await tokens.issueOpaque({ jti: 'j1', sub: 'u1', clientId: 'app', aud: ['app'], scope: 'openid', iat: seconds, exp: seconds + 600 });
    const revokedToken = await tokens.issueOpaque({ jti: 'j2', sub: 'u1', clientId: 'app', aud: ['app'], scope: 'openid', iat: seconds, exp: seconds + 600, grantId: 'grant-9' });
    await tokens.revokeGrant('grant-9', seconds + 600);
    const refresh = new RefreshTokensActor(storage.records, masterKey, 3_600_000, 86_400_000, 0);
    const refreshToken = await refresh.create('family-1', { clientId: 'app', userId: 'u1', sid: 's1', scopes: ['openid'], audience: ['app'], authTime: 1, amr: ['pwd'] });
    await storage.directoryWrites.commit({
      rows: [{ store: 'projects', id: 'p1', value: { id: 'p1', sequence: 3, name: 'Shop' }, base: undefined }],
      keys: { take: [{ key: 'project:o1:Shop', owner: 'p1', taken: () => new Error('taken') }] },
    });
    await storage.meta.setFeatures({ oidcTokenExchange: true });

    const logged = await storage.activity.search({ limit: 10, asc: true });
    expect(logged.map((e) => e.type)).toEqual(['project.added', 'instance.features.set']);

    const report = await copyDataDirToPostgres(storage, pool);
    expect(report.copied).toMatchObject({ authCodes: 1, tokens: 2, refreshFamilies: 1, revokedGrants: 1, projects: 1, uniqueKeys: 1, activity: 2 });
    // The activity log keeps its numbers: a sequence means the same event on both sides.
    const activityOnPostgres = new PostgresActivityLog(pool);
    expect(await activityOnPostgres.search({ limit: 10, asc: true })).toEqual(logged);

    const store = new PostgresStore(pool);
    const onPostgres = { codes: new AuthCodesActor(store), tokens: new IssuedTokensActor(store), refresh: new RefreshTokensActor(store, masterKey, 3_600_000, 86_400_000, 0) };
    const found = (await onPostgres.codes.find(code))!;
    expect(found.grant).toMatchObject(grant);
    await found.consume();
    await expect((await onPostgres.codes.find(code))!.consume()).rejects.toThrow();
    expect(await onPostgres.tokens.findOpaque(opaque)).toMatchObject({ jti: 'j1', sub: 'u1' });
    expect(await onPostgres.tokens.findOpaque(revokedToken)).toBeUndefined();
    const rotation = await onPostgres.refresh.rotate(refreshToken);
    expect(rotation.status).toBe('rotated');
    if (rotation.status === 'rotated') await rotation.committed;
    // A later, longer revocation still raises what was copied.
    expect(await store.raiseTo({ name: 'revokedGrants', binaryKeys: false }, 'grant-9', seconds)).toBe(false);

    const directory = new PostgresDirectory(pool);
    const reader = new PostgresDirectoryReader(directory);
    await reader.load(['projects', 'meta']);
    expect(reader.get('projects', 'p1')).toEqual({ id: 'p1', sequence: 3, name: 'Shop' });
    expect(reader.get('meta', 'features')).toEqual({ oidcTokenExchange: true });
    expect(await directory.holder('project:o1:Shop')).toBe('p1');
    // The copied row keeps its version: a write made from it lands, one made from an older one does not.
    await directory.commit({ rows: [{ store: 'projects', id: 'p1', value: { id: 'p1', sequence: 4, name: 'Shop 2' }, base: { sequence: 3 } }] });

    await expect(copyDataDirToPostgres(storage, pool)).rejects.toBeInstanceOf(TargetNotEmpty);
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM sesame_records WHERE kind = 'authCodes'`);
    expect(rows[0]!.n).toBe(1);

    // And back: the database (as the nodes left it: the code spent, the refresh token rotated) into a new data dir.
    const backDir = mkdtempSync(join(tmpdir(), 'sesame-copy-back-'));
    const back = openStorage(backDir, 'commit');
    try {
      const returned = await copyPostgresToDataDir(pool, back);
      expect(returned.copied).toMatchObject({ authCodes: 1, tokens: 2, refreshFamilies: 1, revokedGrants: 1, projects: 1, uniqueKeys: 1, activity: 3 });
      // The log as the nodes left it (the project changed there), found again by number and by aggregate.
      const onPostgres = await activityOnPostgres.search({ limit: 10, asc: true });
      expect(onPostgres.map((e) => e.type)).toEqual(['project.added', 'instance.features.set', 'project.changed']);
      expect(await back.activity.search({ limit: 10, asc: true })).toEqual(onPostgres);
      expect((await back.activity.search({ limit: 10, asc: true, aggregateId: 'p1' })).map((e) => e.seq)).toEqual([onPostgres[0]!.seq, onPostgres[2]!.seq]);
      const onLmdb = { codes: new AuthCodesActor(back.records), tokens: new IssuedTokensActor(back.records), refresh: new RefreshTokensActor(back.records, masterKey, 3_600_000, 86_400_000, 0) };
      expect((await onLmdb.codes.find(code))!.used).toBe(true);
      expect(await onLmdb.tokens.findOpaque(opaque)).toMatchObject({ jti: 'j1', sub: 'u1' });
      expect(await onLmdb.tokens.findOpaque(revokedToken)).toBeUndefined();
      expect(await onLmdb.tokens.isGrantRevoked('grant-9')).toBe(true);
      // The token the nodes rotated away is reuse now; the one they handed out rotates.
      expect((await onLmdb.refresh.rotate(refreshToken)).status).toBe('reused');
      if (rotation.status === 'rotated') expect((await onLmdb.refresh.rotate(rotation.token)).status).toBe('rotated');
      back.meta.reload();
      expect(back.directoryReader.get('projects', 'p1')).toEqual({ id: 'p1', sequence: 4, name: 'Shop 2' });
      expect(back.meta.features()).toEqual({ oidcTokenExchange: true });
      expect(back.uniqueKeys.holder('project:o1:Shop')).toBe('p1');
      // A data dir that holds data is refused, nothing written.
      await expect(copyPostgresToDataDir(pool, back)).rejects.toBeInstanceOf(TargetNotEmpty);
    } finally {
      await back.close();
      rmSync(backDir, { recursive: true, force: true });
    }
  });
});
