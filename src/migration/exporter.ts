import { nonZero } from '../admin/enums.js';
import { openOtpSecret } from '../auth/otp-secret.js';
import type { AppRecord, OrgRecord, PolicyRecord, UserRecord } from '../model/records.js';
import type { MasterKey } from '../storage/master-key.js';
import { formatProtoDuration } from '../util/duration.js';
import { omitZero } from '../admin/json.js';
import { yieldToEventLoop, type Deadline } from './deadline.js';
import type { DirectorySnapshot } from './store.js';

/**
 * Builds the export bundle `{"orgs":[DataOrg…]}` (compat §1.4) from one directory snapshot, in
 * protojson form: camelCase, zero values omitted, enums by name. Lists are sorted by id, so the
 * same data always exports to the same bytes. Per the seed the export leaves out instance-level
 * things (IAM members, global policies and IdPs) and credentials other than passwords and OTP
 * (machine keys, PATs, app keys, passwordless). Sesame extensions, which ZITADEL's import ignores:
 * apps carry their `clientId`, and with `withPasswords` apps and machine users carry their
 * client secret's SHA-256 digest (`clientSecretSha256`).
 */
export interface ExportOptions {
  orgIds: readonly string[];
  excludedOrgIds: readonly string[];
  withPasswords: boolean;
  withOtp: boolean;
}

const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function groupBy<T>(rows: readonly T[], key: (row: T) => string | undefined): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    if (k === undefined) continue;
    let list = out.get(k);
    if (!list) out.set(k, (list = []));
    list.push(row);
  }
  return out;
}

const b64 = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('base64') : undefined);

function policyFields(policy: PolicyRecord): [string, unknown] | undefined {
  if (policy.kind === 'lockout') {
    const p = policy.policy as { maxPasswordAttempts: number; showLockoutFailure: boolean };
    return ['lockoutPolicy', { maxPasswordAttempts: p.maxPasswordAttempts, showLockoutFailure: p.showLockoutFailure }];
  }
  if (policy.kind === 'login') {
    const p = policy.policy as unknown as Record<string, unknown>;
    return ['loginPolicy', { ...p, passwordlessType: nonZero(p.passwordlessType as string) }];
  }
  return undefined;
}

function oidcApp(app: AppRecord) {
  const c = app.oidc!;
  return {
    projectId: app.projectId,
    name: app.name,
    redirectUris: c.redirectUris,
    responseTypes: c.responseTypes,
    grantTypes: c.grantTypes,
    appType: nonZero(c.appType),
    authMethodType: nonZero(c.authMethodType),
    postLogoutRedirectUris: c.postLogoutRedirectUris,
    version: nonZero(c.version),
    devMode: c.devMode,
    accessTokenType: nonZero(c.accessTokenType),
    accessTokenRoleAssertion: c.accessTokenRoleAssertion,
    idTokenRoleAssertion: c.idTokenRoleAssertion,
    idTokenUserinfoAssertion: c.idTokenUserinfoAssertion,
    clockSkew: c.clockSkewMs > 0 ? formatProtoDuration(c.clockSkewMs) : undefined,
    additionalOrigins: c.additionalOrigins,
    skipNativeAppSuccessPage: c.skipNativeAppSuccessPage,
    backChannelLogoutUri: c.backChannelLogoutUri,
    loginVersion: c.loginVersion,
  };
}

export class Exporter {
  constructor(
    private readonly snapshot: DirectorySnapshot,
    private readonly options: ExportOptions,
    private readonly masterKey: MasterKey,
  ) {}

  /** The orgs to export: all, or the listed ones, minus the excluded ones; sorted by id. */
  selectedOrgs(): OrgRecord[] {
    const wanted = new Set(this.options.orgIds);
    const excluded = new Set(this.options.excludedOrgIds);
    return this.snapshot.orgs
      .filter((o) => (wanted.size === 0 || wanted.has(o.id)) && !excluded.has(o.id))
      .sort(byId);
  }

  /** The bundle as JSON bytes, built org by org (one org's objects alive at a time). */
  async toJson(deadline?: Deadline): Promise<Buffer> {
    const s = this.snapshot;
    const policies = groupBy(s.policies, (p) => p.orgId);
    const projects = groupBy(s.projects, (p) => p.orgId);
    const apps = groupBy(s.apps, (a) => a.orgId);
    const users = groupBy(s.users, (u) => u.orgId);
    const grants = groupBy(s.userGrants, (g) => g.orgId);
    const projectOrg = new Map(s.projects.map((p) => [p.id, p.orgId]));
    const members = groupBy(s.members, (m) => {
      if (m.scope.startsWith('org:')) return m.scope.slice(4);
      if (m.scope.startsWith('project:')) return projectOrg.get(m.scope.slice(8));
      return undefined;
    });
    const secrets = new Map(s.machineSecrets.map((m) => [m.userId, m.secretHash]));

    const chunks: Buffer[] = [Buffer.from('{"orgs":[')];
    let first = true;
    for (const org of this.selectedOrgs()) {
      deadline?.check();
      const dataOrg = this.dataOrg(org, {
        policies: policies.get(org.id) ?? [],
        projects: (projects.get(org.id) ?? []).sort(byId),
        apps: (apps.get(org.id) ?? []).sort(byId),
        users: (users.get(org.id) ?? []).sort(byId),
        grants: grants.get(org.id) ?? [],
        members: members.get(org.id) ?? [],
        secrets,
      });
      chunks.push(Buffer.from((first ? '' : ',') + JSON.stringify(omitZero(dataOrg))));
      first = false;
      await yieldToEventLoop();
    }
    chunks.push(Buffer.from(']}'));
    return Buffer.concat(chunks);
  }

  private dataOrg(
    org: OrgRecord,
    parts: {
      policies: PolicyRecord[];
      projects: DirectorySnapshot['projects'];
      apps: AppRecord[];
      users: UserRecord[];
      grants: DirectorySnapshot['userGrants'];
      members: DirectorySnapshot['members'];
      secrets: Map<string, Uint8Array>;
    },
  ) {
    const { withPasswords, withOtp } = this.options;
    const out: Record<string, unknown> = { orgId: org.id, org: { name: org.name } };
    for (const policy of [...parts.policies].sort(byId)) {
      const field = policyFields(policy);
      if (field) out[field[0]] = field[1];
    }
    out.projects = parts.projects.map((p) => ({
      projectId: p.id,
      project: {
        name: p.name,
        projectRoleAssertion: p.projectRoleAssertion,
        projectRoleCheck: p.projectRoleCheck,
        hasProjectCheck: p.hasProjectCheck,
        privateLabelingSetting: nonZero(p.privateLabelingSetting),
      },
    }));
    out.projectRoles = parts.projects.flatMap((p) =>
      p.roles.map((r) => ({ projectId: p.id, roleKey: r.key, displayName: r.displayName, group: r.group })),
    );
    const secretOf = (app: AppRecord) => (withPasswords ? b64(app.secretHash) : undefined);
    out.apiApps = parts.apps
      .filter((a) => a.api)
      .map((a) => ({ appId: a.id, clientId: a.clientId, clientSecretSha256: secretOf(a), app: { projectId: a.projectId, name: a.name, authMethodType: nonZero(a.api!.authMethodType) } }));
    out.oidcApps = parts.apps
      .filter((a) => a.oidc)
      .map((a) => ({ appId: a.id, clientId: a.clientId, clientSecretSha256: secretOf(a), app: oidcApp(a) }));
    out.humanUsers = parts.users
      .filter((u) => u.human)
      .map((u) => {
        const h = u.human!;
        return {
          userId: u.id,
          user: {
            userName: u.userName,
            profile: { ...h.profile, gender: nonZero(h.profile.gender) },
            email: h.email,
            phone: h.phone,
            hashedPassword: withPasswords && h.passwordHash ? { value: h.passwordHash } : undefined,
            passwordChangeRequired: h.passwordChangeRequired,
            otpCode: withOtp && h.otpSecretSealed ? openOtpSecret(this.masterKey, h.otpSecretSealed) : undefined,
          },
          state: u.state,
        };
      });
    out.machineUsers = parts.users
      .filter((u) => u.machine)
      .map((u) => ({
        userId: u.id,
        // user.userId as well: ZITADEL's import keeps a machine user's id only from there.
        user: { userName: u.userName, name: u.machine!.name, description: u.machine!.description, accessTokenType: nonZero(u.machine!.accessTokenType), userId: u.id },
        state: u.state,
        clientSecretSha256: withPasswords ? b64(parts.secrets.get(u.id)) : undefined,
      }));
    out.userGrants = [...parts.grants]
      .sort((a, b) => compare(a.userId, b.userId) || compare(a.projectId, b.projectId))
      .map((g) => ({ userId: g.userId, projectId: g.projectId, projectGrantId: g.projectGrantId, roleKeys: g.roleKeys }));
    const sortedMembers = [...parts.members].sort((a, b) => compare(a.scope, b.scope) || compare(a.userId, b.userId));
    out.orgMembers = sortedMembers.filter((m) => m.scope === `org:${org.id}`).map((m) => ({ userId: m.userId, roles: m.roles }));
    out.projectMembers = sortedMembers
      .filter((m) => m.scope.startsWith('project:'))
      .map((m) => ({ projectId: m.scope.slice(8), userId: m.userId, roles: m.roles }));
    out.userMetadata = parts.users.flatMap((u) =>
      Object.keys(u.metadata ?? {})
        .sort(compare)
        .map((key) => ({ id: u.id, key, value: b64(u.metadata![key]) })),
    );
    out.domains = org.domains.map((d) => ({
      orgId: org.id,
      domainName: d.domainName,
      isVerified: d.isVerified,
      isPrimary: d.isPrimary,
      validationType: nonZero(d.validationType),
    }));
    out.orgState = org.state;
    return out;
  }
}
