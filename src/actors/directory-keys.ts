import type { AppRecord, OrgRecord, ProjectRecord, UserGrantRecord, UserRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

/**
 * What is unique in the directory, as keys the store holds (see UniqueKeys): one place for the
 * rule, used where a record takes a key, where it frees it, and to build the keys of a data dir
 * written before the store held them.
 */
export const directoryKey = {
  /** An org's name, case-insensitive, in the instance. */
  orgName: (name: string) => `org-name\n${name.toLowerCase()}`,
  /** A domain, in the instance (logins and org scopes find the org by it). */
  domain: (domain: string) => `domain\n${domain.toLowerCase()}`,
  /** A user name, case-insensitive, in its org. */
  userName: (orgId: string, userName: string) => `user-name\n${orgId}\n${userName.toLowerCase()}`,
  /** A user name that is a login name by itself (domain policy `userLoginMustBeDomain: false`), in the instance. */
  loginName: (userName: string) => `login-name\n${userName.toLowerCase()}`,
  /** A resource URI (RFC 8707), in the instance: it names one project. */
  resource: (uri: string) => `resource\n${uri}`,
  /** A person's grant on a project (and project grant). */
  grant: (userId: string, projectId: string, projectGrantId: string | undefined) => `grant\n${userId}\n${projectId}\n${projectGrantId ?? ''}`,
  /** An account at an identity provider: linked to one person in the instance. */
  idpLink: (idpId: string, externalUserId: string) => `idp-link\n${idpId}\n${externalUserId}`,
  /** A client id, in the instance. */
  clientId: (clientId: string) => `client-id\n${clientId}`,
  /** An app's name, in its project. */
  appName: (projectId: string, name: string) => `app-name\n${projectId}\n${name}`,
  /**
   * The places for registered clients in a project (RFC 7591; its quota is how many): a registered
   * client holds one, so registrations on every thread at once never pass the quota together.
   */
  registrationSlots: (projectId: string) => `registration-slot\n${projectId}\n`,
  registrationSlot: (projectId: string, place: number) => `registration-slot\n${projectId}\n${String(place).padStart(6, '0')}`,
};

/** The keys a directory record holds. */
export function keysOfOrg(org: View<OrgRecord>): { key: string; owner: string }[] {
  return [{ key: directoryKey.orgName(org.name), owner: org.id }, ...org.domains.map((d) => ({ key: directoryKey.domain(d.domainName), owner: org.id }))];
}

export function keysOfUser(user: View<UserRecord>): { key: string; owner: string }[] {
  const keys = [{ key: directoryKey.userName(user.orgId, user.userName), owner: user.id }];
  if (user.instanceWideName) keys.push({ key: directoryKey.loginName(user.userName), owner: user.id });
  for (const link of user.human?.idpLinks ?? []) keys.push({ key: directoryKey.idpLink(link.idpId, link.externalUserId), owner: user.id });
  return keys;
}

export function keysOfProject(project: View<ProjectRecord>): { key: string; owner: string }[] {
  return (project.resourceUris ?? []).map((uri) => ({ key: directoryKey.resource(uri), owner: project.id }));
}

export function keysOfGrant(grant: View<UserGrantRecord>): { key: string; owner: string }[] {
  return [{ key: directoryKey.grant(grant.userId, grant.projectId, grant.projectGrantId), owner: grant.id }];
}

export function keysOfApp(app: View<AppRecord>): { key: string; owner: string }[] {
  return [
    { key: directoryKey.clientId(app.clientId), owner: app.id },
    { key: directoryKey.appName(app.projectId, app.name), owner: app.id },
  ];
}
