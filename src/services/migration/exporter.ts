import { lifetimeFields } from '../../zitadel/oidc-config.js';
import { nonZero } from '../../zitadel/enums.js';
import { omitZero } from '../../zitadel/json.js';
import { openOtpSecret } from '../../crypto/otp-secret.js';
import { completePolicy, POLICIES, type OrgPolicyKind, type PolicyDefinition } from '../../zitadel/policies.js';
import { bundleMessageLists } from '../../zitadel/message-texts.js';
import { bundleProviderLists } from '../../zitadel/idp-bundle.js';
import type { AppRecord, MachineSecretRecord, MemberRecord, OrgRecord, PolicyRecord, ProjectRecord, UserGrantRecord, UserRecord } from '../../model/records.js';
import type { MasterKey } from '../../crypto/master-key.js';
import { formatProtoDuration } from '../../util/duration.js';
import type { SnapshotVisitor } from './store.js';
import type { View } from '../../util/readonly.js';

/**
 * Builds the export bundle `{"orgs":[DataOrg…]}` (docs/compatibility.md §1.4) while one directory
 * snapshot is walked: each record becomes its JSON text at once, written as UTF-8 into per-org,
 * per-list byte buffers, so the peak is about the bundle's size rather than the directory as
 * objects. Output is protojson: camelCase, zero values omitted, enums by name; lists in id order,
 * so the same data always exports to the same bytes. As ZITADEL's, the export leaves out
 * instance-level things (IAM members, global policies and IdPs) and credentials other than
 * passwords and OTP (machine keys, PATs, app keys, passwordless; docs/compatibility.md §1.1).
 * Sesame extensions, which ZITADEL's import ignores: apps carry their `clientId`, and with
 * `withPasswords` apps and machine users carry their client secret's SHA-256 digest
 * (`clientSecretSha256`).
 */
export interface ExportOptions {
  orgIds: readonly string[];
  excludedOrgIds: readonly string[];
  withPasswords: boolean;
  withOtp: boolean;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const b64 = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('base64') : undefined);

/**
 * A JSON array written as UTF-8 into chunks, element by element. Chunks start small and double up
 * to 1 MiB, so a short list (most lists of most orgs) does not hold a megabyte until the end.
 */
class JsonList {
  private static readonly FIRST_CHUNK = 16 * 1024;
  private static readonly MAX_CHUNK = 1024 * 1024;
  private nextChunk = JsonList.FIRST_CHUNK;
  private readonly chunks: Buffer[] = [];
  private current: Buffer | undefined;
  private used = 0;
  count = 0;

  add(element: unknown): void {
    this.write((this.count++ === 0 ? '' : ',') + JSON.stringify(omitZero(element)));
  }

  private write(text: string): void {
    const length = Buffer.byteLength(text);
    if (!this.current || this.used + length > this.current.length) {
      this.flush();
      this.current = Buffer.allocUnsafe(Math.max(this.nextChunk, length));
      this.nextChunk = Math.min(this.nextChunk * 2, JsonList.MAX_CHUNK);
    }
    this.used += this.current.write(text, this.used);
  }

  private flush(): void {
    if (this.current && this.used > 0) this.chunks.push(this.current.subarray(0, this.used));
    this.current = undefined;
    this.used = 0;
  }

  /** `"name":[…]` as buffers; nothing for an empty list (protojson omits it). */
  member(name: string): Buffer[] {
    if (this.count === 0) return [];
    this.flush();
    return [Buffer.from(`"${name}":[`), ...this.chunks, Buffer.from(']')];
  }
}

const LISTS = ['projects', 'projectRoles', 'apiApps', 'oidcApps', 'humanUsers', 'machineUsers', 'userGrants', 'orgMembers', 'projectMembers', 'userMetadata', 'userLinks'] as const;
type ListName = (typeof LISTS)[number];

interface OrgParts {
  org: View<OrgRecord>;
  policies: Record<string, unknown>;
  lists: Record<ListName, JsonList>;
  /** Grants are keyed by generated ids; they are sorted by user and project before writing. */
  grants: View<UserGrantRecord>[];
}

function policyField(record: View<PolicyRecord>): [string, unknown] | undefined {
  if (record.kind === 'messageTexts' || record.kind === 'idps') return undefined;
  const definition = POLICIES[record.kind] as PolicyDefinition<OrgPolicyKind>;
  if (!definition.bundleField) return undefined;
  const policy = completePolicy(record.kind, record.policy as never);
  return [definition.bundleField, (definition.bundleView ?? definition.view)(policy)];
}

function oidcApp(app: View<AppRecord>) {
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
    requirePushedAuthorizationRequests: c.requirePushedAuthorizationRequests,
    dpopBoundAccessTokens: c.dpopBoundAccessTokens,
    ...lifetimeFields(c),
    loginVersion: c.loginVersion,
  };
}

export class Exporter implements SnapshotVisitor {
  private readonly wanted: Set<string>;
  private readonly excluded: Set<string>;
  private readonly parts = new Map<string, OrgParts>();
  private readonly projectOrg = new Map<string, string>();
  private readonly secrets = new Map<string, Uint8Array>();

  constructor(
    private readonly options: ExportOptions,
    private readonly masterKey: MasterKey,
  ) {
    this.wanted = new Set(options.orgIds);
    this.excluded = new Set(options.excludedOrgIds);
  }

  private of(orgId: string): OrgParts | undefined {
    return this.parts.get(orgId);
  }

  org(org: View<OrgRecord>): void {
    if ((this.wanted.size > 0 && !this.wanted.has(org.id)) || this.excluded.has(org.id)) return;
    const lists = Object.fromEntries(LISTS.map((name) => [name, new JsonList()])) as Record<ListName, JsonList>;
    this.parts.set(org.id, { org, policies: {}, lists, grants: [] });
  }

  policy(policy: View<PolicyRecord>): void {
    const parts = this.of(policy.orgId);
    if (parts && policy.kind === 'messageTexts') Object.assign(parts.policies, bundleMessageLists(policy.policy as PolicyRecord<'messageTexts'>['policy']));
    if (parts && policy.kind === 'idps') Object.assign(parts.policies, bundleProviderLists(policy.orgId, (policy.policy as PolicyRecord<'idps'>['policy']).providers));
    const field = parts && policyField(policy);
    if (parts && field) parts.policies[field[0]] = field[1];
  }

  project(p: View<ProjectRecord>): void {
    this.projectOrg.set(p.id, p.orgId);
    const parts = this.of(p.orgId);
    if (!parts) return;
    parts.lists.projects.add({
      projectId: p.id,
      project: {
        name: p.name,
        projectRoleAssertion: p.projectRoleAssertion,
        projectRoleCheck: p.projectRoleCheck,
        hasProjectCheck: p.hasProjectCheck,
        privateLabelingSetting: nonZero(p.privateLabelingSetting),
        // Sesame's field (RFC 8707), absent when empty so the bundle stays ZITADEL's shape.
        resourceUris: p.resourceUris?.length ? p.resourceUris : undefined,
      },
    });
    for (const r of p.roles) parts.lists.projectRoles.add({ projectId: p.id, roleKey: r.key, displayName: r.displayName, group: r.group });
  }

  app(a: View<AppRecord>): void {
    const parts = this.of(a.orgId);
    if (!parts) return;
    const clientSecretSha256 = this.options.withPasswords ? b64(a.secretHash) : undefined;
    if (a.api) {
      parts.lists.apiApps.add({ appId: a.id, clientId: a.clientId, clientSecretSha256, app: { projectId: a.projectId, name: a.name, authMethodType: nonZero(a.api.authMethodType) } });
    } else if (a.oidc) {
      parts.lists.oidcApps.add({ appId: a.id, clientId: a.clientId, clientSecretSha256, app: oidcApp(a) });
    }
  }

  machineSecret(record: View<MachineSecretRecord>): void {
    if (this.options.withPasswords) this.secrets.set(record.userId, record.secretHash);
  }

  user(u: View<UserRecord>): void {
    const parts = this.of(u.orgId);
    if (!parts) return;
    const { withPasswords, withOtp } = this.options;
    if (u.human) {
      const h = u.human;
      parts.lists.humanUsers.add({
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
      });
    } else if (u.machine) {
      const m = u.machine;
      parts.lists.machineUsers.add({
        userId: u.id,
        // user.userId as well: ZITADEL's import keeps a machine user's id only from there.
        user: { userName: u.userName, name: m.name, description: m.description, accessTokenType: nonZero(m.accessTokenType), userId: u.id },
        state: u.state,
        clientSecretSha256: b64(this.secrets.get(u.id)),
      });
    }
    for (const link of u.human?.idpLinks ?? []) parts.lists.userLinks.add({ userId: u.id, idpId: link.idpId, providedUserId: link.externalUserId, providedUserName: link.userName });
    for (const key of Object.keys(u.metadata ?? {}).sort(compare)) {
      parts.lists.userMetadata.add({ id: u.id, key, value: b64(u.metadata![key]) });
    }
  }

  userGrant(g: View<UserGrantRecord>): void {
    this.of(g.orgId)?.grants.push(g);
  }

  member(m: View<MemberRecord>): void {
    if (m.scope.startsWith('org:')) {
      this.of(m.scope.slice(4))?.lists.orgMembers.add({ userId: m.userId, roles: m.roles });
    } else if (m.scope.startsWith('project:')) {
      const projectId = m.scope.slice(8);
      const orgId = this.projectOrg.get(projectId);
      if (orgId) this.of(orgId)?.lists.projectMembers.add({ projectId, userId: m.userId, roles: m.roles });
    }
  }

  /** The bundle's bytes, orgs in id order. */
  toBuffer(): Buffer {
    const out: Buffer[] = [Buffer.from('{"orgs":[')];
    const orgIds = [...this.parts.keys()].sort(compare);
    for (const [index, orgId] of orgIds.entries()) {
      const { org, policies, lists, grants } = this.parts.get(orgId)!;
      grants.sort((a, b) => compare(a.userId, b.userId) || compare(a.projectId, b.projectId));
      for (const g of grants) lists.userGrants.add({ userId: g.userId, projectId: g.projectId, projectGrantId: g.projectGrantId, roleKeys: g.roleKeys });
      const members: Buffer[][] = [];
      const head = JSON.stringify(omitZero({ orgId: org.id, org: { name: org.name }, ...policies }));
      members.push([Buffer.from(head.slice(1, -1))]);
      for (const name of LISTS) members.push(lists[name].member(name));
      const domains = org.domains.map((d) => omitZero({ orgId: org.id, domainName: d.domainName, isVerified: d.isVerified, isPrimary: d.isPrimary, validationType: nonZero(d.validationType) }));
      const tail = JSON.stringify(omitZero({ domains, orgState: org.state }));
      members.push([Buffer.from(tail.slice(1, -1))]);
      out.push(Buffer.from(index === 0 ? '{' : ',{'));
      members
        .filter((m) => m.length > 0)
        .forEach((m, i) => {
          if (i > 0) out.push(Buffer.from(','));
          out.push(...m);
        });
      out.push(Buffer.from('}'));
      this.parts.delete(orgId);
    }
    out.push(Buffer.from(']}'));
    return Buffer.concat(out);
  }
}
