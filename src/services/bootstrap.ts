import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InstanceInfo, OrgsActor } from '../actors/orgs.js';
import { log } from '../util/log.js';
import { hashPassword } from '../workers/passwords.js';

/**
 * First start on an empty data dir: a default org, the instance's management project, a machine
 * user `admin` holding IAM_OWNER whose personal access token is written to `<data dir>/admin.pat`,
 * and a person `sesame-admin` holding IAM_OWNER who signs in to the console (ZITADEL's first
 * human, `zitadel-admin`, there with a well-known password): a random initial password written to
 * `<data dir>/sesame-admin.password`, to be changed at the first sign-in. Both files mode 0600.
 * Later starts find the instance and change nothing.
 */
const DEFAULT_ORG_NAME = 'Sesame';
export const FIRST_PERSON = 'sesame-admin';
export const FIRST_PERSON_PASSWORD_FILE = 'sesame-admin.password';

/** A password no one can guess that meets any complexity policy (every character class). */
function initialPassword(): string {
  return `${randomBytes(18).toString('base64url')}.Aa1`;
}

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
  writeFileSync(patPath, `${token}\n`, { mode: 0o600 });
  // Hashed here, once, on this thread: the worker pool is not started yet.
  const password = initialPassword();
  const person = await orgs.addUser(org.id, {
    person: {
      userName: FIRST_PERSON,
      profile: { firstName: 'Sesame', lastName: 'Administrator', nickName: '', preferredLanguage: 'en', gender: 'GENDER_UNSPECIFIED' },
      email: { email: `${FIRST_PERSON}@${orgs.primaryDomain(org)}`, isEmailVerified: true },
    },
    credentials: { passwordHash: hashPassword(password), passwordChangeRequired: true },
  });
  await orgs.addMember('instance', person.id, ['IAM_OWNER']);
  await orgs.addMember(`org:${org.id}`, person.id, ['ORG_OWNER']);
  writeFileSync(join(dataDir, FIRST_PERSON_PASSWORD_FILE), `${password}\n`, { mode: 0o600 });
  const info: InstanceInfo = { defaultOrgId: org.id, managementProjectId: project.id, adminUserId: admin.id };
  await orgs.setInstance(info);
  log.info('first start: instance created', { org: org.id, admin: 'admin', adminPat: patPath });
  return info;
}
