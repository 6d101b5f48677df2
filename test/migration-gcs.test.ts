import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type ApiResult } from './helpers/api.js';
import { fakeServiceAccountBase64, startGcsEmulator, type GcsEmulator } from './helpers/gcs-emulator.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * Export to and import from cloud object storage, against a real Cloud Storage emulator (the one
 * in firebase-tools, started in this process): A writes the bundle as one object with `gcsOutput`,
 * B reads it with `dataOrgsGcs` (and `dataOrgsv1Gcs`). Both servers reach the emulator through
 * STORAGE_EMULATOR_HOST; the test reads the object back with the same client library.
 */
let emulator: GcsEmulator;
let a: InProcessServer;
let b: InProcessServer;
let orgId: string;
const BUCKET = 'sesame-migration';
const serviceaccountJson = fakeServiceAccountBase64();
const emulatorHostBefore = process.env.STORAGE_EMULATOR_HOST;

const ok = (result: ApiResult): any => {
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  return result.body;
};

beforeAll(async () => {
  emulator = await startGcsEmulator();
  // Both servers run in this process: the storage client finds the emulator through the environment.
  process.env.STORAGE_EMULATOR_HOST = emulator.host;
  [a, b] = await Promise.all([startInProcess(), startInProcess()]);
  orgId = `gcs-${Date.now().toString(36)}`;
  ok(
    await api(a, 'POST', '/admin/v1/import', {
      token: a.pat,
      body: {
        timeout: '1m',
        dataOrgs: {
          orgs: [
            {
              orgId,
              org: { name: orgId },
              humanUsers: [
                { userId: `${orgId}-u`, user: { userName: 'u', profile: { firstName: 'G', lastName: 'CS' }, email: { email: 'g@cs.example' }, password: 'Cloud-Pass-1', otpCode: 'JBSWY3DPEHPK3PXP' } },
              ],
              projects: [{ projectId: `${orgId}-p`, project: { name: 'P' } }],
              apiApps: [{ appId: `${orgId}-a`, clientId: `${orgId}-client`, app: { projectId: `${orgId}-p`, name: 'API' } }],
            },
          ],
        },
      },
    }),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await emulator?.stop();
  // The test files that run next in this worker (vitest.config.ts: isolate false) must not reach a stopped emulator.
  if (emulatorHostBefore === undefined) delete process.env.STORAGE_EMULATOR_HOST;
  else process.env.STORAGE_EMULATOR_HOST = emulatorHostBefore;
});

describe('cloud object storage', () => {
  it('exports one object with gcsOutput; responseOutput decides the body', async () => {
    const path = `exports/${orgId}.json`;
    const res = ok(await api(a, 'POST', '/admin/v1/export', { token: a.pat, body: { orgIds: [orgId], withPasswords: true, withOtp: true, gcsOutput: { bucket: BUCKET, path, serviceaccountJson } } }));
    expect(res).toEqual({});
    process.env.STORAGE_EMULATOR_HOST = emulator.host;
    const [bytes] = await new Storage({ projectId: emulator.projectId }).bucket(BUCKET).file(path).download();
    const bundle = JSON.parse(bytes.toString('utf8'));
    expect(bundle.orgs.map((o: any) => o.orgId)).toEqual([orgId]);
    expect(bundle.orgs[0].humanUsers[0].user.otpCode).toBe('JBSWY3DPEHPK3PXP');
    expect(bundle.orgs[0].humanUsers[0].user.hashedPassword.value).toMatch(/^\$argon2id\$/);

    const both = ok(
      await api(a, 'POST', '/admin/v1/export', {
        token: a.pat,
        body: { org_ids: [orgId], response_output: true, gcs_output: { bucket: BUCKET, path: `${path}.2`, serviceaccount_json: serviceaccountJson } },
      }),
    );
    expect(both.orgs[0].orgId).toBe(orgId);
  });

  it('imports from the object into another instance, with the same result as inline', async () => {
    const result = ok(await api(b, 'POST', '/admin/v1/import', { token: b.pat, body: { timeout: '2m', dataOrgsGcs: { bucket: BUCKET, path: `exports/${orgId}.json`, serviceaccountJson } } }));
    expect(result).toEqual({ success: { orgs: [{ orgId, projectIds: [`${orgId}-p`], apiAppIds: [`${orgId}-a`], humanUserIds: [`${orgId}-u`] }] } });
    const fromA = ok(await api(a, 'POST', '/admin/v1/export', { token: a.pat, body: { orgIds: [orgId], withPasswords: true, withOtp: true } }));
    const fromB = ok(await api(b, 'POST', '/admin/v1/export', { token: b.pat, body: { orgIds: [orgId], withPasswords: true, withOtp: true } }));
    expect(fromB).toEqual(fromA);
    expect(fromB.orgs[0].apiApps[0].clientId).toBe(`${orgId}-client`);
  });

  it('reads v1 bundles from storage too', async () => {
    process.env.STORAGE_EMULATOR_HOST = emulator.host;
    const v1Org = `${orgId}-v1`;
    const bundle = {
      orgs: [
        {
          orgId: v1Org,
          org: { name: v1Org },
          iamPolicy: { userLoginMustBeDomain: false },
          humanUsers: [{ userId: `${v1Org}-u`, user: { userName: 'v', profile: { firstName: 'V', lastName: 'One' }, email: { email: 'v@one.example' } } }],
        },
      ],
    };
    await new Storage({ projectId: emulator.projectId }).bucket(BUCKET).file('v1.json').save(JSON.stringify(bundle), { resumable: false });
    const result = ok(
      await api(b, 'POST', '/admin/v1/import', { token: b.pat, body: { timeout: '2m', data_orgsv1_gcs: { bucket: BUCKET, path: 'v1.json', serviceaccount_json: serviceaccountJson } } }),
    );
    expect(result.success.orgs).toEqual([{ orgId: v1Org, humanUserIds: [`${v1Org}-u`] }]);
    expect(result.errors).toBeUndefined();
    // v1's iamPolicy is the org's domain policy: user names are login names by themselves.
    const user = ok(await api(b, 'GET', `/management/v1/users/${v1Org}-u`, { token: b.pat, orgId: v1Org }));
    expect(user.user.preferredLoginName).toBe('v');
  });

  it('reports a missing object, a broken bundle and a timeout cleanly', async () => {
    const missing = await api(b, 'POST', '/admin/v1/import', { token: b.pat, body: { timeout: '1m', dataOrgsGcs: { bucket: BUCKET, path: 'nope.json', serviceaccountJson } } });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 5, message: expect.stringContaining(`gs://${BUCKET}/nope.json not found`) });

    process.env.STORAGE_EMULATOR_HOST = emulator.host;
    await new Storage({ projectId: emulator.projectId }).bucket(BUCKET).file('broken.json').save('{"orgs":[{"orgId":', { resumable: false });
    const broken = await api(b, 'POST', '/admin/v1/import', { token: b.pat, body: { timeout: '1m', dataOrgsGcs: { bucket: BUCKET, path: 'broken.json', serviceaccountJson } } });
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/broken\.json is not valid JSON/);

    const late = await api(b, 'POST', '/admin/v1/import', { token: b.pat, body: { timeout: '1ns', dataOrgsGcs: { bucket: BUCKET, path: `exports/${orgId}.json`, serviceaccountJson } } });
    expect(late.status).toBe(504);
    const badKey = await api(a, 'POST', '/admin/v1/export', { token: a.pat, body: { gcsOutput: { bucket: BUCKET, path: 'x', serviceaccountJson: 'bm90IGpzb24' } } });
    expect(badKey.status).toBe(400);
  });
});
