import { describe, expect, it } from 'vitest';
import { MIGRATE_SIZE, generateOrg, migrate } from '../../bench/scenarios/migrate.js';
import { OPT_IN_SCENARIOS, SCENARIOS, selectScenarios } from '../../bench/scenarios/index.js';

/** The migrate bench scenario: opt-in, self-running, and the org it generates. */
describe('migrate scenario', () => {
  it('runs only when named and measures itself', () => {
    expect(SCENARIOS.map((s) => s.name)).not.toContain('migrate');
    expect(OPT_IN_SCENARIOS).toContain(migrate);
    expect(selectScenarios(['migrate'])).toEqual([migrate]);
    expect(selectScenarios(['jwks', 'migrate']).map((s) => s.name)).toEqual(['jwks', 'migrate']);
    expect('run' in migrate).toBe(true);
  });

  it('skips targets without the admin API', async () => {
    const target = { name: 'oidc-provider', issuer: 'http://x', endpoints: {} as never, ccOpaque: undefined, ccJwt: undefined, introspector: undefined, notes: [] };
    expect(await migrate.run(target)).toEqual({ skip: expect.stringContaining('admin') });
  });

  it('generates an org of 10,000 users, 100 projects and 500 apps with consistent references', () => {
    const { orgId, bundle } = generateOrg();
    const org = bundle.orgs[0] as Record<string, any[]> & { orgId: string };
    expect(org.orgId).toBe(orgId);
    expect(org.humanUsers).toHaveLength(MIGRATE_SIZE.users);
    expect(org.projects).toHaveLength(MIGRATE_SIZE.projects);
    expect(org.oidcApps!.length + org.apiApps!.length).toBe(MIGRATE_SIZE.apps);
    const projectIds = new Set(org.projects!.map((p) => p.projectId));
    for (const app of [...org.oidcApps!, ...org.apiApps!]) expect(projectIds.has(app.app.projectId)).toBe(true);
    const userIds = new Set(org.humanUsers!.map((u) => u.userId));
    expect(userIds.size).toBe(MIGRATE_SIZE.users);
    for (const grant of org.userGrants!) expect(userIds.has(grant.userId) && projectIds.has(grant.projectId)).toBe(true);
  });
});
