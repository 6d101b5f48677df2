import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InstanceInfo, OrgsActor } from '../actors/orgs.js';
import { log } from '../util/log.js';

/**
 * First start on an empty data dir: a default org, the instance's management project, and a
 * machine user `admin` holding IAM_OWNER whose personal access token is written to
 * `<data dir>/admin.pat` (mode 0600). Later starts find the instance and change nothing.
 */
const DEFAULT_ORG_NAME = 'Sesame';

export async function bootstrapInstance(orgs: OrgsActor, dataDir: string): Promise<InstanceInfo> {
  const existing = orgs.instance();
  if (existing) return existing;
  if (orgs.listOrgs().length > 0) {
    throw new Error(`data dir ${dataDir} holds organizations but no instance record: an earlier first start was interrupted; start with an empty data dir`);
  }
  const org = await orgs.addOrg({ name: DEFAULT_ORG_NAME });
  const project = await orgs.addProject(org.id, {
    name: 'ZITADEL',
    projectRoleAssertion: false,
    projectRoleCheck: false,
    hasProjectCheck: false,
    privateLabelingSetting: 'PRIVATE_LABELING_SETTING_UNSPECIFIED',
  });
  const admin = await orgs.addUser(org.id, {
    userName: 'admin',
    machine: { name: 'Instance administrator', description: 'created at first start', accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' },
  });
  await orgs.addMember('instance', admin.id, ['IAM_OWNER']);
  await orgs.addMember(`org:${org.id}`, admin.id, ['ORG_OWNER']);
  const { token } = await orgs.addPat(admin.id);
  const patPath = join(dataDir, 'admin.pat');
  writeFileSync(patPath, token + '\n', { mode: 0o600 });
  const info: InstanceInfo = { defaultOrgId: org.id, managementProjectId: project.id, adminUserId: admin.id };
  await orgs.setInstance(info);
  log.info('first start: instance created', { org: org.id, admin: 'admin', adminPat: patPath });
  return info;
}
