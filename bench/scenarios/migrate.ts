import { hashSync } from '@node-rs/argon2';
import { ARGON2 } from '../../src/workers/argon2-algorithms.js';
import { rssMiB, sampleRss } from '../rss.js';
import type { ScenarioResult } from '../table.js';
import type { PreparedTarget } from '../targets/target.js';
import type { CustomScenario } from './scenario.js';

/**
 * `migrate` (run with `--scenarios migrate`): an org of 10,000 users, 100 projects and 500 apps is
 * generated as an import bundle and imported (`POST /admin/v1/import`), then exported again
 * (`POST /admin/v1/export` with passwords and OTP). Each direction reports its wall time and the
 * server's peak RSS while it ran.
 */
export const MIGRATE_SIZE = { users: 10_000, projects: 100, apps: 500 };

/** MIGRATE_USERS overrides the user count (e.g. 200000 for a bundle of ~100 MiB). */
function sizeFromEnv(env: NodeJS.ProcessEnv = process.env): typeof MIGRATE_SIZE {
  const users = Number(env.MIGRATE_USERS);
  return Number.isInteger(users) && users > 0 ? { ...MIGRATE_SIZE, users } : MIGRATE_SIZE;
}

/** The people's password hash (Argon2id, OWASP's parameters), computed once per bundle. */
export function benchPasswordHash(): string {
  return hashSync('bench-password', { algorithm: ARGON2.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
}

export interface GeneratedOrg {
  orgId: string;
  bundle: { orgs: unknown[] };
}

/** The bundle of one generated org (pure; the password hash is computed once and shared). */
export function generateOrg(size = MIGRATE_SIZE, passwordHash = '$2b$10$CSZ2JarG4XYbGa.JkfpqnO2wrlbfp5eb5LScHSGo9XGeZ.a.Ic54S'): GeneratedOrg {
  const orgId = `bench-migrate-${Date.now().toString(36)}`;
  const projects = Array.from({ length: size.projects }, (_, i) => ({ projectId: `${orgId}-p${i}`, project: { name: `Project ${i}`, projectRoleAssertion: i % 2 === 0 } }));
  const projectRoles = projects.flatMap((p) => ['admin', 'editor', 'viewer'].map((roleKey) => ({ projectId: p.projectId, roleKey, displayName: roleKey })));
  const appsPerProject = Math.ceil(size.apps / size.projects);
  const oidcApps: unknown[] = [];
  const apiApps: unknown[] = [];
  for (let i = 0; i < size.apps; i++) {
    const project = projects[Math.floor(i / appsPerProject) % projects.length]!;
    const appId = `${orgId}-a${i}`;
    if (i % appsPerProject === appsPerProject - 1) {
      apiApps.push({ appId, clientId: `${appId}-client`, app: { projectId: project.projectId, name: `API ${i}`, authMethodType: 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' } });
    } else {
      oidcApps.push({
        appId,
        clientId: `${appId}-client`,
        app: {
          projectId: project.projectId,
          name: `Web ${i}`,
          redirectUris: [`https://app${i}.example.com/callback`],
          postLogoutRedirectUris: [`https://app${i}.example.com/signed-out`],
          responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
          grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
          authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
          accessTokenType: 'OIDC_TOKEN_TYPE_JWT',
        },
      });
    }
  }
  const humanUsers = Array.from({ length: size.users }, (_, i) => ({
    userId: `${orgId}-u${i}`,
    user: {
      userName: `user${i}`,
      profile: { firstName: `First${i}`, lastName: `Last${i}`, displayName: `User ${i}`, preferredLanguage: 'en' },
      email: { email: `user${i}@example.com`, isEmailVerified: true },
      ...(i % 3 === 0 ? { phone: { phone: `+41 79 ${String(i).padStart(7, '0')}`, isPhoneVerified: true } } : {}),
      hashedPassword: { value: passwordHash },
      ...(i % 10 === 0 ? { otpCode: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' } : {}),
    },
    state: 'USER_STATE_ACTIVE',
  }));
  const userGrants = humanUsers.map((u, i) => ({ userId: u.userId, projectId: projects[i % projects.length]!.projectId, roleKeys: ['viewer'] }));
  const orgMembers = humanUsers.slice(0, 10).map((u) => ({ userId: u.userId, roles: ['ORG_OWNER'] }));
  return {
    orgId,
    bundle: { orgs: [{ orgId, org: { name: orgId }, projects, projectRoles, oidcApps, apiApps, humanUsers, userGrants, orgMembers }] },
  };
}

async function timed(target: PreparedTarget, path: string, body: string | Buffer): Promise<{ seconds: number; peakRssMiB: number | undefined; status: number; text: string }> {
  const rss = sampleRss(target.pid, 50);
  const started = performance.now();
  const res = await fetch(`${target.admin!.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.admin!.token}`, 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  const seconds = (performance.now() - started) / 1000;
  return { seconds, peakRssMiB: rss.stop(), status: res.status, text };
}

function row(scenario: string, target: PreparedTarget, seconds: number, ok: boolean, peakRssMiB: number | undefined): ScenarioResult {
  return {
    scenario,
    target: target.name,
    requests: 1,
    rps: 1 / seconds,
    p50: seconds * 1000,
    p99: seconds * 1000,
    p999: seconds * 1000,
    non2xx: ok ? 0 : 1,
    errors: 0,
    seconds,
    ...(peakRssMiB === undefined ? {} : { peakRssMiB }),
  };
}

export const migrate: CustomScenario = {
  name: 'migrate',
  alg: 'RS256',
  async run(target) {
    if (!target.admin) return { skip: 'export and import are Sesame admin calls' };
    const size = sizeFromEnv();
    const { users, projects, apps } = size;
    const what = `${users} users, ${projects} projects, ${apps} apps`;
    const { orgId, bundle } = generateOrg(size, benchPasswordHash());
    const body = Buffer.from(JSON.stringify({ timeout: '30m', dataOrgs: bundle }));
    (bundle.orgs as unknown[]).length = 0; // only the bytes are needed from here on
    const idle = rssMiB(target.pid);

    const imported = await timed(target, '/admin/v1/import', body);
    const result = JSON.parse(imported.text) as { errors?: unknown[]; success?: { orgs?: { humanUserIds?: string[] }[] } };
    const importOk = imported.status === 200 && !result.errors && result.success?.orgs?.[0]?.humanUserIds?.length === users;
    if (!importOk) process.stdout.write(`  import answered ${imported.status}: ${imported.text.slice(0, 500)}\n`);
    process.stdout.write(
      `  import: ${what} (${(body.length / 2 ** 20).toFixed(1)} MiB) in ${imported.seconds.toFixed(2)} s, peak RSS ${imported.peakRssMiB?.toFixed(0) ?? '?'} MiB (idle ${idle?.toFixed(0) ?? '?'} MiB)\n`,
    );

    const exported = await timed(target, '/admin/v1/export', JSON.stringify({ orgIds: [orgId], withPasswords: true, withOtp: true, timeout: '30m' }));
    const exportOk = exported.status === 200 && (JSON.parse(exported.text) as { orgs: { humanUsers: unknown[] }[] }).orgs[0]?.humanUsers.length === users;
    if (!exportOk) process.stdout.write(`  export answered ${exported.status}: ${exported.text.slice(0, 500)}\n`);
    process.stdout.write(`  export: ${what} (${(exported.text.length / 2 ** 20).toFixed(1)} MiB) in ${exported.seconds.toFixed(2)} s, peak RSS ${exported.peakRssMiB?.toFixed(0) ?? '?'} MiB\n`);
    return [row('migrate-import', target, imported.seconds, importOk, imported.peakRssMiB), row('migrate-export', target, exported.seconds, exportOk, exported.peakRssMiB)];
  },
};
