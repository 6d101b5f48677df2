import { actingFor, type ActsFor } from './acting-for.js';
import type { Editor } from '../model/activity.js';
import { newHuman, type HumanCredentials, type NewHuman } from './new-human.js';
import type { DirectoryStorage } from '../storage/db.js';
import { WriteBatch } from '../storage/batch.js';
import { inIdOrder, Table } from '../storage/table.js';
import { alreadyExists, invalidArgument, notFound, preconditionFailed } from '../model/errors.js';
import type {
  HumanData,
  OrgDomain,
  MachineData,
  MemberRecord,
  OrgRecord,
  OrgState,
  PatRecord,
  DomainPolicy,
  PolicyKind,
  PolicyRecord,
  PolicyTypes,
  ProjectRecord,
  ProjectRole,
  UserGrantRecord,
  UserRecord,
  UserState,
} from '../model/records.js';
import { DEFAULT_POLICIES, FAR_FUTURE, INSTANCE_POLICY, MAX_IDP_LINKS, webauthnTokenRefusal, type IdpLink, type WebAuthnToken } from '../model/records.js';
import { newId, newOpaqueToken } from '../util/ids.js';
import { sha256, sha256Base64url } from '../util/hash.js';
import { clock } from '../util/clock.js';
import { recordLockout } from '../observability/recorder.js';
import { ownRow, type View } from '../util/readonly.js';
import { phoneDigits } from '../model/phone.js';
import { KeyedQueue } from '../util/keyed-queue.js';
import type { DirectoryStore } from '../storage/directory-log.js';
import { decidedAgain, retakeAll } from './decided-again.js';
import { directoryKey, keysOfGrant, keysOfOrg, keysOfProject, keysOfUser } from './directory-keys.js';

/**
 * Owns the directory: organizations and their domains, projects and roles, users (human and
 * machine), memberships, user grants and personal access tokens. Everything is held in memory and
 * persisted through its tables; other parts of Sesame read and change it only through these methods.
 */
export interface InstanceInfo {
  defaultOrgId: string;
  /** The instance's own management project (`zitadel` in `urn:zitadel:iam:org:project:id:zitadel:aud`). */
  managementProjectId: string;
  adminUserId: string;
}

const lower = (s: string) => s.toLowerCase();

function stamp<T extends { createdAt: number; changedAt: number; sequence: number }>(row: T, isNew: boolean): T {
  const now = Date.now();
  if (isNew) row.createdAt = now;
  row.changedAt = now;
  row.sequence = (row.sequence ?? 0) + 1;
  return row;
}

/** The role without which nobody could administer the instance: its last holder keeps it. */
const LAST_OWNER_ROLE = 'IAM_OWNER';

/** Org names become DNS labels of their primary domain: `My Org` → `my-org.<instance domain>`. */
function domainLabel(name: string): string {
  const label = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return label || 'org';
}

/**
 * A copy's row read again as committed (Table.refresh), its lookups moved with it: what `unindex`
 * files the row under before, `index` after. True: the change was taken.
 */
function retake<T extends { id: string }>(table: Table<T>, id: string, unindex?: (row: View<T>) => void, index?: (row: View<T>) => void): true {
  const { before, after } = table.refresh(id);
  if (before) unindex?.(before);
  if (after) index?.(after);
  return true;
}

/** Adds a row's id to its user's set in an index of ids by user. */
function indexByUser(index: Map<string, Set<string>>, row: { id: string; userId: string }): void {
  let ids = index.get(row.userId);
  if (!ids) index.set(row.userId, (ids = new Set()));
  ids.add(row.id);
}

/** Takes a row's id from its user's set (and the set, once empty). */
function unindexByUser(index: Map<string, Set<string>>, row: { id: string; userId: string }): void {
  const ids = index.get(row.userId);
  ids?.delete(row.id);
  if (ids?.size === 0) index.delete(row.userId);
}

export interface NewHumanUser {
  id?: string;
  person: NewHuman;
  credentials: HumanCredentials;
}

export interface NewMachineUser {
  id?: string;
  userName: string;
  state?: UserState;
  machine: MachineData;
}

/** What AddProject and UpdateProject set (the import's projects too). */
export type ProjectSettings = Pick<ProjectRecord, 'name' | 'projectRoleAssertion' | 'projectRoleCheck' | 'hasProjectCheck' | 'privateLabelingSetting'> & {
  resourceUris?: readonly string[] | undefined;
};

/**
 * A user's revocation horizon moved to `to` (now): always forward, by a millisecond at least, so
 * that each change that voids what the user began is told by the horizon having moved (the activity
 * log tells a new password from the same one hashed anew by it: model/row-events.ts).
 */
function movedHorizon(current: number | undefined, to: number): number {
  return Math.max(to, (current ?? 0) + 1);
}

export class OrgsActor implements ActsFor {
  /** Who this actor's changes are by (see by); Sesame itself on the actor as composed. */
  readonly editor: Editor | undefined = undefined;

  /** This actor acting for `editor`: its changes are `editor`'s in the activity log. */
  by(editor: Editor): this {
    return actingFor(this, editor);
  }

  private readonly orgs: Table<OrgRecord>;
  private readonly projects: Table<ProjectRecord>;
  private readonly users: Table<UserRecord>;
  private readonly members: Table<MemberRecord>;
  private readonly userGrants: Table<UserGrantRecord>;
  private readonly pats: Table<PatRecord>;
  private readonly policies: Table<PolicyRecord>;
  private readonly orgByDomain = new Map<string, string>();
  /** Resource URI (RFC 8707) → the project it is registered on; committed projects only. */
  private readonly projectByResource = new Map<string, string>();
  /** Resource URIs a batch not yet committed registers, with their project: taken meanwhile. */
  private readonly claimedResources = new Map<string, string>();
  /** Domains an existing org gets in a batch not yet committed: taken, but not yet found by lookups. */
  private readonly claimedDomains = new Map<string, string>();
  private readonly userByOrgName = new Map<string, string>();
  /** `<org id>\n<user name>` of users staged in a batch not yet committed: taken, but not yet found by logins. */
  private readonly claimedUserNames = new Set<string>();
  /** Lower-cased instance-wide user names (`userLoginMustBeDomain: false`) staged in a batch not yet committed. */
  private readonly claimedLoginNames = new Set<string>();
  /** Per org, how many users have a login name of each rule (domain policy `userLoginMustBeDomain`). */
  private readonly usersByNameRule = new Map<string, { domain: number; instanceWide: number }>();
  /** Lower-cased names of orgs staged in a batch not yet committed: taken meanwhile. */
  private readonly claimedOrgNames = new Set<string>();
  /** `<user>\n<project>\n<project grant>` of user grants staged in a batch not yet committed. */
  private readonly claimedGrants = new Set<string>();
  private readonly usersByName = new Map<string, Set<string>>();
  /** `<idp id>\n<external user id>` → the person linked to that account (committed links). */
  private readonly userByIdpLink = new Map<string, string>();
  /** Verified emails and phone numbers of humans (lower case / digits): logins by email or phone. */
  private readonly usersByContact = new Map<string, Set<string>>();
  private readonly completePolicies = new WeakMap<PolicyRecord, PolicyTypes[PolicyKind]>();
  private readonly patByHash = new Map<string, string>();
  private readonly grantIdsByUser = new Map<string, Set<string>>();
  /**
   * Membership ids per user: who may act on whom, and whose power a token carries, ask for a user's
   * memberships on every management call and some token issuance (a scan of every membership before).
   */
  private readonly memberIdsByUser = new Map<string, Set<string>>();
  /**
   * Changes to one project (its settings, its roles) one at a time: each is staged from the
   * project as the one before left it. Staged side by side, all but the first would be refused
   * as conflicting (16 role additions at once: 15 refused).
   */
  private readonly projectChanges = new KeyedQueue();

  constructor(
    private readonly storage: DirectoryStorage,
    /** Host of the issuer: org primary domains are `<org label>.<instance domain>`. */
    readonly instanceDomain: string,
  ) {
    this.orgs = Table.ofDirectory(storage, 'orgs');
    this.projects = Table.ofDirectory(storage, 'projects');
    this.users = Table.ofDirectory(storage, 'users');
    this.members = Table.ofDirectory(storage, 'members');
    this.userGrants = Table.ofDirectory(storage, 'userGrants');
    this.pats = Table.ofDirectory(storage, 'pats');
    this.policies = Table.ofDirectory(storage, 'policies');
    for (const org of this.orgs.values()) this.indexOrg(org);
    for (const project of this.projects.values()) for (const uri of project.resourceUris ?? []) this.projectByResource.set(uri, project.id);
    for (const user of this.users.values()) this.indexUser(user);
    for (const grant of this.userGrants.values()) this.indexGrant(grant);
    for (const member of this.members.values()) this.indexMember(member);
    for (const pat of this.pats.values()) this.patByHash.set(Buffer.from(pat.tokenHash).toString('base64url'), pat.id);
  }

  // ---- instance ----

  /** The instance record; kept by the `meta` store's owner. */
  instance(): View<InstanceInfo> | undefined {
    return this.storage.meta.instance<InstanceInfo>();
  }

  async setInstance(info: InstanceInfo): Promise<void> {
    await this.storage.meta.setInstance(info);
  }

  // ---- orgs ----

  getOrg(id: string, batch?: WriteBatch): View<OrgRecord> | undefined {
    return this.orgs.get(id, batch);
  }

  requireOrg(id: string, batch?: WriteBatch): View<OrgRecord> {
    const org = this.orgs.get(id, batch);
    if (!org) throw notFound('ORG-1ms9d', `organization ${id} not found`);
    return org;
  }

  /** In id order, the same on every thread (a copy fed by the change feed holds rows in the order they came). */
  listOrgs(): View<OrgRecord>[] {
    return inIdOrder(this.orgs.values());
  }

  /** An org's users in id order: a scan of every user (the lists of the management API). */
  usersOfOrg(orgId: string): View<UserRecord>[] {
    return inIdOrder([...this.users.values()].filter((user) => user.orgId === orgId));
  }

  /** An org's projects in id order: a scan of every project (the lists of the management API). */
  projectsOfOrg(orgId: string): View<ProjectRecord>[] {
    return inIdOrder([...this.projects.values()].filter((project) => project.orgId === orgId));
  }

  primaryDomain(org: View<OrgRecord>): string {
    return org.domains.find((d) => d.isPrimary)?.domainName ?? org.domains[0]?.domainName ?? '';
  }
  /** The primary domain of an org by id ('' when unknown): ID tokens' and introspection's role claims. */
  primaryDomainOf(orgId: string): string {
    const org = this.orgs.get(orgId);
    return org ? this.primaryDomain(org) : '';
  }

  async addOrg(input: { id?: string; name: string; state?: OrgState }): Promise<View<OrgRecord>> {
    const batch = new WriteBatch(this.editor);
    const org = this.stageOrg(input, batch);
    await batch.commit(this.storage);
    return org;
  }

  /** addOrg into a batch: the org is in memory at once and written when the batch commits. */
  stageOrg(input: { id?: string; name: string; state?: OrgState }, batch: WriteBatch): View<OrgRecord> {
    const name = input.name.trim();
    if (name.length === 0 || name.length > 200) throw invalidArgument('ORG-mruNY', 'org name must have 1-200 characters');
    const id = input.id ?? newId();
    if (this.orgs.taken(id)) throw alreadyExists('ORG-lapo2m', `organization ${id} already exists`);
    const nameKey = lower(name);
    if (this.claimedOrgNames.has(nameKey) || [...this.orgs.values()].some((o) => lower(o.name) === nameKey)) {
      throw alreadyExists('ORG-9k3Jd', `an organization named "${name}" already exists`);
    }
    let domain = `${domainLabel(name)}.${this.instanceDomain}`;
    for (let n = 2; this.orgByDomain.has(domain) || this.claimedDomains.has(domain); n++) domain = `${domainLabel(name)}-${n}.${this.instanceDomain}`;
    const org = stamp<OrgRecord>(
      {
        id,
        name,
        state: input.state ?? 'ORG_STATE_ACTIVE',
        domains: [{ domainName: domain, isVerified: true, isPrimary: true, validationType: 'DOMAIN_VALIDATION_TYPE_UNSPECIFIED' }],
        createdAt: 0,
        changedAt: 0,
        sequence: 0,
      },
      true,
    );
    this.indexOrg(org);
    this.claim(this.claimedOrgNames, nameKey, batch);
    // The store decides whatever this copy knew (another thread may be adding the same name now).
    batch.takeKey({ key: directoryKey.orgName(name), owner: id, taken: () => alreadyExists('ORG-9k3Jd', `an organization named "${name}" already exists`) });
    batch.takeKey({ key: directoryKey.domain(domain), owner: id, taken: () => alreadyExists('ORG-D0m2s', `domain ${domain} is already used by another organization`) });
    batch.onRollback(() => this.unindexOrg(org));
    this.orgs.stage(org, batch);
    return org;
  }

  /**
   * Adds a domain to an org (an import's `domains[]`): verified and primary as given. A domain the
   * org already has is left as it is (false); one another org uses is AlreadyExists.
   */
  stageOrgDomain(orgId: string, domain: OrgDomain, batch: WriteBatch): boolean {
    const org = this.requireOrg(orgId, batch);
    const name = lower(domain.domainName.trim());
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(name) || name.length > 253) {
      throw invalidArgument('ORG-D0m1n', `"${domain.domainName}" is not a domain name`);
    }
    const owner = this.orgByDomain.get(name) ?? this.claimedDomains.get(name);
    if (owner !== undefined && owner !== orgId) throw alreadyExists('ORG-D0m2s', `domain ${name} is already used by another organization`);
    if (owner === orgId) return false;
    const added: OrgDomain = { domainName: name, isVerified: domain.isVerified, isPrimary: domain.isPrimary, validationType: domain.validationType ?? 'DOMAIN_VALIDATION_TYPE_UNSPECIFIED' };
    const domains = domain.isPrimary ? org.domains.map((d) => ({ ...d, isPrimary: false })) : [...org.domains];
    const updated = stamp<OrgRecord>({ ...ownRow<OrgRecord>(org), domains: [...domains, added] }, false);
    // Logins and org scopes find the org by it once the batch is committed.
    this.claimedDomains.set(name, orgId);
    batch.onRollback(() => {
      if (this.claimedDomains.get(name) === orgId) this.claimedDomains.delete(name);
    });
    batch.onCommit(() => {
      this.claimedDomains.delete(name);
      this.orgByDomain.set(name, orgId);
    });
    batch.takeKey({ key: directoryKey.domain(name), owner: orgId, taken: () => alreadyExists('ORG-D0m2s', `domain ${name} is already used by another organization`) });
    this.orgs.stage(updated, batch);
    return true;
  }

  /** An org's custom policy from an import; AlreadyExists when the org has one (not overwritten). */
  stagePolicy<K extends PolicyKind>(kind: K, orgId: string, policy: PolicyTypes[K], batch: WriteBatch): View<PolicyRecord<K>> {
    this.requireOrg(orgId, batch);
    const id = `${kind}:${orgId}`;
    if (this.policies.taken(id)) throw alreadyExists('POLICY-0kdf2', `the organization already has a custom ${kind} policy`);
    if (kind === 'domain') this.checkLoginNameRule(orgId, policy as DomainPolicy);
    const record = stamp<PolicyRecord<K>>({ id, kind, orgId, policy, createdAt: 0, changedAt: 0, sequence: 0 }, true);
    this.policies.stage(record, batch);
    return record as View<PolicyRecord<K>>;
  }

  /** Whether the org has a policy of its own of this kind (else the instance's applies). */
  hasOwnPolicy(kind: PolicyKind, orgId: string): boolean {
    return this.policies.has(`${kind}:${orgId}`);
  }

  /** The org's custom policies (export); instance defaults are not listed. */
  customPolicies(orgId: string): View<PolicyRecord>[] {
    return [...this.policies.values()].filter((p) => p.orgId === orgId);
  }

  findOrgByDomain(domain: string): View<OrgRecord> | undefined {
    const id = this.orgByDomain.get(lower(domain));
    return id === undefined ? undefined : this.orgs.get(id);
  }

  // ---- policies ----

  /** The org's policy of a kind: its custom one, else the instance default. */
  policy<K extends PolicyKind>(kind: K, orgId: string): { policy: View<PolicyTypes[K]>; record: View<PolicyRecord<K>> | undefined } {
    const record = (this.policies.get(`${kind}:${orgId}`) ?? this.policies.get(`${kind}:${INSTANCE_POLICY}`)) as PolicyRecord<K> | undefined;
    if (!record) return { policy: DEFAULT_POLICIES[kind] as View<PolicyTypes[K]>, record: undefined };
    // Records written before a field existed get that field's default; merged once per record
    // (a record is replaced, never changed, so the cache follows it), not on every sign-in.
    let policy = this.completePolicies.get(record) as PolicyTypes[K] | undefined;
    if (!policy) this.completePolicies.set(record, (policy = { ...DEFAULT_POLICIES[kind], ...record.policy }));
    return { policy: policy as View<PolicyTypes[K]>, record: record as View<PolicyRecord<K>> };
  }

  /**
   * Adds (`create` true) or updates (false) the org's custom policy, ZITADEL's AlreadyExists /
   * NotFound / no-change rules; 'either' sets it whether or not there is one (the instance default).
   * `sameIsFine`: storing what is there is no error (activating a label policy again).
   */
  setPolicy<K extends PolicyKind>(
    kind: K,
    orgId: string,
    next: PolicyTypes[K] | ((own: View<PolicyTypes[K]> | undefined) => PolicyTypes[K]),
    create: boolean | 'either',
    sameIsFine = false,
  ): Promise<View<PolicyRecord<K>>> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      if (orgId !== INSTANCE_POLICY) this.requireOrg(orgId);
      const id = `${kind}:${orgId}`;
      const existing = this.policies.get(id) as PolicyRecord<K> | undefined;
      // A function decides on the org's own policy as stored (decided again after a conflict).
      const policy = typeof next === 'function' ? next(existing?.policy as View<PolicyTypes[K]> | undefined) : next;
      if (create === true && existing) throw alreadyExists('POLICY-0kdf2', `the organization already has a custom ${kind} policy`);
      if (kind === 'domain') this.checkLoginNameRule(orgId, policy as DomainPolicy);
      if (create === false && !existing) throw notFound('POLICY-3kd9f', `the organization has no custom ${kind} policy (Errors.Org.${kind}Policy.NotFound)`);
      if (existing && JSON.stringify(existing.policy) === JSON.stringify(policy)) {
        if (sameIsFine) return existing as View<PolicyRecord<K>>;
        throw preconditionFailed('POLICY-9kdf2', 'no changes (Errors.Org.Policy.NotChanged)');
      }
      const record = stamp<PolicyRecord<K>>({ ...(existing ?? { createdAt: 0, changedAt: 0, sequence: 0 }), id, kind, orgId, policy }, !existing);
      await this.policies.put(record, { by: this.editor });
      return record as View<PolicyRecord<K>>;
    });
  }

  /**
   * Whether login names are `username@domain` is fixed once an org has users (their names were
   * taken, in the org or in the instance, under the rule in force): a domain policy that changes it
   * for an org with users (for the instance default: any org that follows it) is refused.
   */
  private checkLoginNameRule(orgId: string, policy: DomainPolicy): void {
    // The users an org has of each rule are counted as they are indexed: no walk over every user.
    const conflicting = (org: string) => (policy.userLoginMustBeDomain ? this.usersByNameRule.get(org)?.instanceWide : this.usersByNameRule.get(org)?.domain) ?? 0;
    const orgs = orgId === INSTANCE_POLICY ? [...this.usersByNameRule.keys()].filter((org) => !this.policies.has(`domain:${org}`)) : [orgId];
    const org = orgs.find((o) => conflicting(o) > 0);
    if (org !== undefined) {
      throw preconditionFailed(
        'POLICY-L0g1n',
        `userLoginMustBeDomain cannot change for ${orgId === INSTANCE_POLICY ? `the instance default while an org that follows it (${org})` : 'an organization that'} has users whose login names are ${policy.userLoginMustBeDomain ? 'their user names' : 'username@domain'}; set the domain policy before adding users`,
      );
    }
  }

  /** The domain policy a new user of the org is made under (one staged in the same batch counts). */
  private domainPolicyFor(orgId: string, batch?: WriteBatch): View<DomainPolicy> {
    const own = (this.policies.get(`domain:${orgId}`, batch) ?? this.policies.get(`domain:${INSTANCE_POLICY}`, batch)) as PolicyRecord<'domain'> | undefined;
    return own ? { ...DEFAULT_POLICIES.domain, ...own.policy } : DEFAULT_POLICIES.domain;
  }

  /** Resets the org to the default policy. */
  removePolicy(kind: PolicyKind, orgId: string): Promise<void> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const id = `${kind}:${orgId}`;
      if (!this.policies.has(id)) throw notFound('POLICY-3kd9f', `the organization has no custom ${kind} policy`);
      if (kind === 'domain') this.checkLoginNameRule(orgId, (this.policies.get(`domain:${INSTANCE_POLICY}`)?.policy as DomainPolicy) ?? DEFAULT_POLICIES.domain);
      await this.policies.remove(id, { by: this.editor });
    });
  }

  // ---- password checks (lockout) and a person's credentials ----

  /** Counts a failed password check; locks the user when the org's lockout policy says so. */
  async recordPasswordFailure(userId: string): Promise<{ locked: boolean }> {
    return this.recordFailure(userId, 'failedPasswordAttempts', 'maxPasswordAttempts');
  }

  /**
   * Resets the failure count after a successful check, and stores a re-hash of the password if
   * given — only while the stored hash is still the one verified (a hash set meanwhile, by an
   * administrator or the person, is never replaced by the old password's).
   */
  async recordPasswordSuccess(userId: string, rehash?: { verified: string; rehashed: string }): Promise<void> {
    const user = this.requireUser(userId);
    // Nothing to write (the common case: no failures, no rehash): no transaction. The caller took the
    // person as stored before its check, under the person's password-check lease (LoginDecisions),
    // so no failure was counted since; a reset since only lowers the count.
    if (!user.human || (user.human.failedPasswordAttempts === 0 && !rehash)) return;
    let rehashed = false;
    await this.changeUser(
      userId,
      (stored) => {
        if (!stored.human) return undefined;
        rehashed = rehash !== undefined && stored.human.passwordHash === rehash.verified;
        if (stored.human.failedPasswordAttempts === 0 && !rehashed) return undefined;
        return { human: { failedPasswordAttempts: 0, ...(rehashed ? { passwordHash: rehash!.rehashed } : {}) } };
      },
      () => !rehashed,
    );
  }

  /**
   * Counts a wrong TOTP code; locks the user at the lockout policy's `maxOtpAttempts` (0 = never).
   * `still(stored)`: whether the sign-in it belongs to still stands as the person is stored (else
   * nothing is counted: `over`).
   */
  async recordOtpFailure(userId: string, still?: (stored: View<UserRecord>) => boolean): Promise<{ locked: boolean; over: boolean }> {
    return this.recordFailure(userId, 'failedOtpAttempts', 'maxOtpAttempts', still);
  }

  /**
   * One failed check counted, on the person as stored (parallel failures on every thread each
   * count once); the user is locked at the lockout policy's maximum (0 = never, nothing written
   * for TOTP).
   */
  private async recordFailure(
    userId: string,
    counter: 'failedPasswordAttempts' | 'failedOtpAttempts',
    limit: 'maxPasswordAttempts' | 'maxOtpAttempts',
    still: (stored: View<UserRecord>) => boolean = () => true,
  ): Promise<{ locked: boolean; over: boolean }> {
    const user = this.requireUser(userId);
    if (!user.human) throw preconditionFailed('USER-Hum4n', 'only people have a password or a TOTP second factor');
    const max = this.policy('lockout', user.orgId).policy[limit];
    // Password failures are counted even without a limit (shown in the console); TOTP ones only with one.
    if (max === 0 && counter === 'failedOtpAttempts') {
      const stored = await this.storedUser(userId);
      return { locked: false, over: !stored || !still(stored) };
    }
    let lock = false;
    let over = false;
    const updated = await this.changeUser(
      userId,
      (stored) => {
        if (!stored.human) return undefined;
        over = !still(stored);
        if (over) return undefined;
        const failures = (stored.human[counter] ?? 0) + 1;
        lock = max > 0 && failures >= max && stored.state === 'USER_STATE_ACTIVE';
        // Wrong codes after a right password mean the password is known to someone: that lock
        // voids what the user holds. Wrong passwords do not (anyone knowing a login name could
        // void a person's tokens).
        return { human: { [counter]: failures }, ...(lock ? { state: 'USER_STATE_LOCKED' as const } : {}), ...(lock && counter === 'failedOtpAttempts' ? { revokedBefore: clock.now() } : {}) };
      },
      // A count alone is quiet (the copies on other threads need not take it at once; a
      // password-guessing run would otherwise move the directory's version at every guess); a lock is not.
      () => !lock,
    );
    if (lock) recordLockout(counter === 'failedPasswordAttempts' ? 'password' : 'otp');
    return { locked: updated?.state === 'USER_STATE_LOCKED', over };
  }

  /** A right TOTP code resets the count; false when `still(stored)` says its sign-in no longer stands (nothing reset). */
  async recordOtpSuccess(userId: string, still: (stored: View<UserRecord>) => boolean = () => true): Promise<boolean> {
    const stored = await this.storedUser(userId);
    if (!stored || !still(stored)) return false;
    // Nothing to reset (the common case): no transaction.
    if (!stored.human?.failedOtpAttempts) return true;
    let over = false;
    await this.changeUser(
      userId,
      (now) => {
        over = !still(now);
        return !over && now.human?.failedOtpAttempts ? { human: { failedOtpAttempts: 0 } } : undefined;
      },
      () => true,
    );
    return !over;
  }

  /**
   * Enrolls a TOTP secret (sealed) confirmed with a code; a person has at most one. Undefined when
   * `still(stored)` says the sign-in it belongs to no longer stands (nothing enrolled).
   */
  async enrollOtp(userId: string, sealedSecret: Uint8Array, still: (stored: View<UserRecord>) => boolean = () => true): Promise<View<UserRecord> | undefined> {
    let over = false;
    const after = await this.changeUser(userId, (stored) => {
      over = !still(stored);
      if (over) return undefined;
      if (!stored.human) throw preconditionFailed('USER-Hum4n', 'only people have a TOTP second factor');
      if (stored.human.otpSecretSealed) throw alreadyExists('USER-Otp3x', 'TOTP is already set up (Errors.User.MFA.OTP.AlreadyReady)');
      return { human: { otpSecretSealed: sealedSecret, otpPendingSealed: undefined, failedOtpAttempts: 0 } };
    });
    return over ? undefined : after;
  }

  /** AddMyAuthFactorOTP: a TOTP secret (sealed) waits for a code from it; one waiting before is replaced. */
  async setPendingOtp(userId: string, sealedSecret: Uint8Array): Promise<View<UserRecord>> {
    return this.requireChanged(
      userId,
      await this.changeUser(userId, (stored) => {
        if (!stored.human) throw preconditionFailed('USER-Hum4n', 'only people have a TOTP second factor');
        if (stored.human.otpSecretSealed) throw alreadyExists('USER-Otp3x', 'TOTP is already set up (Errors.User.MFA.OTP.AlreadyReady)');
        return { human: { otpPendingSealed: sealedSecret } };
      }),
    );
  }

  /**
   * Codes by email as the person's second factor, on (their address must be verified) or off;
   * `still(stored)` as for enrollOtp. Undefined when the sign-in no longer stands.
   */
  async setOtpEmail(userId: string, on: boolean, still: (stored: View<UserRecord>) => boolean = () => true): Promise<View<UserRecord> | undefined> {
    this.requireUser(userId);
    let over = false;
    const after = await this.changeUser(userId, (stored) => {
      over = !still(stored);
      if (over) return undefined;
      if (!stored.human) throw preconditionFailed('USER-Hum4n', 'only people have a second factor');
      if (on && !stored.human.email.isEmailVerified) throw preconditionFailed('USER-2n8fs', 'the email address must be verified first (Errors.User.Email.NotVerified)');
      if (on && stored.human.otpEmail) throw alreadyExists('USER-KLJ2d', 'codes by email are already set up (Errors.User.MFA.OTP.AlreadyReady)');
      if (!on && !stored.human.otpEmail) throw notFound('USER-b7Jkl', 'codes by email are not set up (Errors.User.MFA.OTP.NotExisting)');
      return { human: { otpEmail: on ? true : undefined } };
    });
    return over ? undefined : after;
  }

  /** The person's TOTP second factor removed (ZITADEL's RemoveHumanMultiFactorOTP, RemoveMyAuthFactorOTP). */
  async removeOtp(userId: string, orgId?: string): Promise<View<UserRecord>> {
    this.requireUser(userId, orgId);
    return this.requireChanged(
      userId,
      await this.changeUser(userId, (stored) => {
        if (!stored.human?.otpSecretSealed) throw notFound('USER-5Nqyt', 'TOTP is not set up (Errors.User.MFA.OTP.NotExisting)');
        return { human: { otpSecretSealed: undefined, failedOtpAttempts: 0 } };
      }),
    );
  }

  /** The person skipped the TOTP enrollment prompt (asked again after the policy's mfaInitSkipLifetime). */
  async skipMfaInit(userId: string, at: number): Promise<void> {
    await this.changeUser(userId, (stored) => (stored.human ? { human: { mfaInitSkippedAt: at } } : undefined));
  }

  /**
   * Sets a new password hash chosen by the person; a required change is then done. Undefined when
   * `still(stored)` says the sign-in it belongs to no longer stands (an administrator's reset or a
   * lock meanwhile, on any thread): the password just reset is not replaced.
   */
  async changePassword(userId: string, passwordHash: string, still: (stored: View<UserRecord>) => boolean = () => true): Promise<View<UserRecord> | undefined> {
    this.requireUser(userId);
    let over = false;
    const after = await this.changeUser(userId, (stored) => {
      over = !still(stored);
      if (over) return undefined;
      if (!stored.human) throw preconditionFailed('USER-Hum4n', 'only people have a password');
      return { human: { passwordHash, passwordChangeRequired: false, failedPasswordAttempts: 0 }, revokedBefore: clock.now() };
    });
    return over ? undefined : this.requireChanged(userId, after);
  }

  /**
   * A password set by the person with a mailed code (a reset, or an initialization): what the old
   * one opened ends (the revocation horizon moves), a required change is done, the failure counts
   * reset; a person still initial becomes active. `verifiedEmail`: the code went to this address,
   * so it is verified if it is still the person's (an initialization proves it).
   */
  async setPasswordByCode(userId: string, passwordHash: string, verifiedEmail?: string): Promise<View<UserRecord>> {
    this.requireUser(userId);
    return this.requireChanged(
      userId,
      await this.changeUser(userId, (stored) => {
        if (!stored.human) throw preconditionFailed('USER-Hum4n', 'only people have a password');
        const verifies = verifiedEmail !== undefined && lower(stored.human.email.email) === verifiedEmail;
        return {
          human: { passwordHash, passwordChangeRequired: false, failedPasswordAttempts: 0, failedOtpAttempts: 0, ...(verifies ? { email: { ...stored.human.email, isEmailVerified: true } } : {}) },
          ...(stored.state === 'USER_STATE_INITIAL' ? { state: 'USER_STATE_ACTIVE' as const } : {}),
          revokedBefore: clock.now(),
        };
      }),
    );
  }

  /**
   * UpdateHumanEmail: a person's address, verified or not. An unverified one signs nobody in by
   * email, and the next sign-in asks for the code mailed there; codes sent to the old address verify nothing.
   * `moved`: the address is another mailbox than the stored one.
   */
  async changeEmail(userId: string, email: HumanData['email']): Promise<{ user: View<UserRecord>; moved: boolean }> {
    let moved = false;
    const user = this.requireChanged(
      userId,
      await this.changeUser(userId, (stored) => {
        if (!stored.human) throw preconditionFailed('USER-Hum4n', 'only people have an email address');
        const now = stored.human.email;
        // Decided on the row as stored: whether the address moved (another letter case is the same mailbox).
        moved = now.email.toLowerCase() !== email.email.toLowerCase();
        if (now.email === email.email && now.isEmailVerified === email.isEmailVerified) return undefined;
        return { human: { email } };
      }),
    );
    return { user, moved };
  }

  /** UpdateHumanPhone and RemoveHumanPhone (`undefined`): a verified number signs its person in, as an address does. */
  async changePhone(userId: string, phone: HumanData['phone'] | undefined): Promise<View<UserRecord>> {
    return this.requireChanged(
      userId,
      await this.changeUser(userId, (stored) => {
        if (!stored.human) throw preconditionFailed('USER-Hum4n', 'only people have a phone number');
        if (!phone && !stored.human.phone) throw notFound('USER-Ph0n0', 'the person has no phone number (Errors.User.Phone.NotFound)');
        return { human: { phone } };
      }),
    );
  }

  /** The person proved they read mail at `email` (a code sent there): verified if it is still their address. Undefined when it is not. */
  async verifyEmail(userId: string, email: string): Promise<View<UserRecord> | undefined> {
    let matched = false;
    const after = await this.changeUser(userId, (stored) => {
      matched = stored.human !== undefined && lower(stored.human.email.email) === email;
      if (!matched || stored.human!.email.isEmailVerified) return undefined;
      return { human: { email: { ...stored.human!.email, isEmailVerified: true } } };
    });
    return matched ? after : undefined;
  }

  /**
   * SetHumanPassword: an administrator sets a person's password (hash made by the caller); the
   * person must change it at the next login unless `changeRequired` is false. Failure counts reset.
   */
  async setPassword(userId: string, orgId: string, passwordHash: string, changeRequired: boolean): Promise<View<UserRecord>> {
    this.requireUser(userId, orgId);
    return this.requireChanged(
      userId,
      await this.changeUser(userId, (stored) => {
        if (!stored.human) throw preconditionFailed('USER-Hum4n', 'only people have a password');
        return {
          human: { passwordHash, passwordChangeRequired: changeRequired, failedPasswordAttempts: 0, failedOtpAttempts: 0 },
          revokedBefore: clock.now(),
        };
      }),
    );
  }

  // ---- user state (ZITADEL's Deactivate/Reactivate/Lock/UnlockUser and RemoveUser) ----

  /** DeactivateUser: an active (or locked) user may no longer sign in or hold tokens. */
  deactivateUser(userId: string, orgId: string): Promise<View<UserRecord>> {
    return this.changeState(userId, orgId, 'USER_STATE_INACTIVE', (state) => {
      if (state === 'USER_STATE_INITIAL') return 'an initial user cannot be deactivated (Errors.User.CantDeactivateInitial)';
      if (state === 'USER_STATE_INACTIVE') return 'the user is already deactivated (Errors.User.AlreadyInactive)';
      return undefined;
    });
  }

  /** ReactivateUser: a deactivated user is active again. */
  reactivateUser(userId: string, orgId: string): Promise<View<UserRecord>> {
    return this.changeState(userId, orgId, 'USER_STATE_ACTIVE', (state) => (state === 'USER_STATE_INACTIVE' ? undefined : 'the user is not deactivated (Errors.User.NotInactive)'));
  }

  /** LockUser: an active (or initial) user is locked, as the lockout policy does after too many failures. */
  lockUser(userId: string, orgId: string): Promise<View<UserRecord>> {
    return this.changeState(userId, orgId, 'USER_STATE_LOCKED', (state) =>
      state === 'USER_STATE_ACTIVE' || state === 'USER_STATE_INITIAL' ? undefined : 'only an active or initial user can be locked (Errors.User.ShouldBeActiveOrInitial)',
    );
  }

  /** UnlockUser: a locked user is active again, with the failure counts reset. */
  unlockUser(userId: string, orgId: string): Promise<View<UserRecord>> {
    return this.changeState(userId, orgId, 'USER_STATE_ACTIVE', (state) => (state === 'USER_STATE_LOCKED' ? undefined : 'the user is not locked (Errors.User.NotLocked)'), {
      failedPasswordAttempts: 0,
      failedOtpAttempts: 0,
    });
  }

  /** A new state, refused by `refusal` as the user is stored (a lock by the login on another thread included). */
  private async changeState(userId: string, orgId: string, state: UserState, refusal: (current: UserState) => string | undefined, humanChange: Partial<HumanData> = {}): Promise<View<UserRecord>> {
    this.requireUser(userId, orgId);
    if (state !== 'USER_STATE_ACTIVE') return this.stopActing(userId, orgId, state, refusal);
    return this.requireChanged(
      userId,
      await this.changeUser(userId, (stored) => {
        const refused = refusal(stored.state);
        if (refused) throw preconditionFailed('USER-St4te', refused);
        return { state, ...(stored.human ? { human: humanChange } : {}) };
      }),
    );
  }

  /**
   * A user leaves the active state (deactivated, locked), decided in one batch: what they hold is
   * void (it stays void after an unlock or reactivation), and an instance owner who can act stays
   * (stageOwnersKept). Whether the user owns the instance is read through the batch, and making
   * someone an owner writes their user row again (stageOwnerJoining): a lock decided on a copy that
   * had not yet seen the new membership conflicts in the store and is decided again.
   */
  private stopActing(userId: string, orgId: string, state: UserState, refusal: (current: UserState) => string | undefined): Promise<View<UserRecord>> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const batch = new WriteBatch(this.editor);
      const stored = this.requireUser(userId, orgId, batch);
      const refused = refusal(stored.state);
      if (refused) throw preconditionFailed('USER-St4te', refused);
      // Counted before the change is staged: the owners who can act now.
      if (this.ownsInstance(userId, batch)) this.stageOwnersKept(userId, batch);
      const updated = stamp<UserRecord>({ ...ownRow<UserRecord>(stored), state, revokedBefore: movedHorizon(stored.revokedBefore, clock.now()) }, false);
      this.users.stage(updated, batch);
      await batch.commit(this.storage);
      return updated;
    });
  }

  /**
   * Voids every token, refresh family and session the user began until now, staged (committed with
   * a new machine secret: what the old secret obtained goes with it; see
   * ClientsActor.stageMachineSecretRenewal).
   */
  stageTokenRevocation(userId: string, batch: WriteBatch): View<UserRecord> {
    const user = this.requireUser(userId, undefined, batch);
    const updated = stamp<UserRecord>({ ...ownRow<UserRecord>(user), revokedBefore: movedHorizon(user.revokedBefore, clock.now()) }, false);
    this.users.stage(updated, batch);
    return updated;
  }

  /**
   * RemoveUser: the user and what is theirs in this actor (PATs, memberships, user grants) go in
   * one commit; the name is free again, and an instance owner who can act stays (stageOwnersKept,
   * read through the batch as in stopActing). The user's PATs stop authenticating at once (back if
   * the commit fails). Resolves once durable.
   */
  removeUser(userId: string, orgId: string): Promise<View<UserRecord>> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const batch = new WriteBatch(this.editor);
      const user = this.requireUser(userId, orgId, batch);
      if (this.ownsInstance(userId, batch)) this.stageOwnersKept(userId, batch);
      const pats = this.patsOf(userId);
      const members = [...this.members.valuesIn(batch)].filter((m) => m.userId === userId);
      const grants = this.grantsOf(userId, batch);
      this.users.stageRemoval(userId, batch);
      for (const { key, owner } of keysOfUser(user)) batch.freeKey(key, owner);
      for (const pat of pats) this.pats.stageRemoval(pat.id, batch);
      for (const member of members) this.members.stageRemoval(member.id, batch);
      for (const grant of grants) {
        this.userGrants.stageRemoval(grant.id, batch);
        for (const { key, owner } of keysOfGrant(grant)) batch.freeKey(key, owner);
      }
      const hashes = pats.map((pat) => [Buffer.from(pat.tokenHash).toString('base64url'), pat.id] as const);
      for (const [hash] of hashes) this.patByHash.delete(hash);
      batch.onRollback(() => {
        for (const [hash, id] of hashes) if (this.pats.get(id)) this.patByHash.set(hash, id);
      });
      batch.onCommit(() => {
        this.unindexUser(user);
        this.grantIdsByUser.delete(userId);
        this.memberIdsByUser.delete(userId);
      });
      await batch.commit(this.storage);
      return user;
    });
  }

  /**
   * A user changed as stored when the change is made (see Table.change; the login's decisions
   * write people on every thread): `change(stored)` gives what changes (its `human` merged into
   * the person's), undefined for nothing; it may throw to refuse. `quiet(after)` (after `change`
   * ran): the change is only failure bookkeeping, no change of the user as clients see it
   * (`updated_at`, the copies' version; see Table.put). Resolves with the user as left, undefined
   * when gone. The lookups follow the change (names and contacts do not change here, but a copy
   * that had not taken the user yet finds it now).
   */
  private async changeUser(
    userId: string,
    change: (stored: View<UserRecord>) => { human?: Partial<HumanData>; state?: UserState; revokedBefore?: number } | undefined,
    quiet: () => boolean = () => false,
  ): Promise<View<UserRecord> | undefined> {
    const before = this.users.get(userId);
    let isQuiet = false;
    const after = await this.users.change(
      userId,
      (stored) => {
        if (!stored) return undefined;
        const delta = change(stored);
        if (!delta) return undefined;
        isQuiet = quiet();
        const current = ownRow<UserRecord>(stored);
        const next: UserRecord = {
          ...current,
          ...(delta.state ? { state: delta.state } : {}),
          ...(delta.revokedBefore !== undefined ? { revokedBefore: movedHorizon(current.revokedBefore, delta.revokedBefore) } : {}),
          ...(delta.human && current.human ? { human: { ...current.human, ...delta.human } } : {}),
        };
        // A quiet change (failure bookkeeping) is no change of the user as clients see it (`updated_at`).
        return isQuiet ? next : stamp<UserRecord>(next, false);
      },
      { quiet: () => isQuiet, by: this.editor },
    );
    const now = this.users.get(userId);
    if (now !== before) {
      if (before) this.unindexUser(before);
      if (now) this.indexUser(now);
    }
    return after;
  }

  /**
   * The user as stored now (what another thread committed a moment ago included), taken into this
   * copy: for the decisions of the login that read a person before they change it.
   */
  async storedUser(userId: string): Promise<View<UserRecord> | undefined> {
    await this.storage.directoryReader.fetch([{ store: 'users', id: userId }]);
    this.takeChange('users', userId);
    return this.users.get(userId);
  }

  /** The unique keys every record of this actor holds (to build them in the store once, for a data dir from before). */
  *uniqueKeys(): Iterable<{ key: string; owner: string }> {
    for (const org of this.orgs.values()) yield* keysOfOrg(org);
    for (const user of this.users.values()) yield* keysOfUser(user);
    for (const project of this.projects.values()) yield* keysOfProject(project);
    for (const grant of this.userGrants.values()) yield* keysOfGrant(grant);
  }

  /** Every record read again as stored (a copy that fell too far behind the change feed to follow it, and cannot be loaded anew). */
  retakeAll(): void {
    retakeAll(this, { orgs: this.orgs, projects: this.projects, users: this.users, members: this.members, userGrants: this.userGrants, pats: this.pats, policies: this.policies });
  }

  /** The user a change left, or NotFound when it was removed meanwhile. */
  private requireChanged(userId: string, user: View<UserRecord> | undefined): View<UserRecord> {
    if (!user) throw notFound('USER-Nf3x9', `user ${userId} not found`);
    return user;
  }

  private indexOrg(org: View<OrgRecord>): void {
    for (const d of org.domains) this.orgByDomain.set(lower(d.domainName), org.id);
  }

  private unindexOrg(org: View<OrgRecord>): void {
    for (const d of org.domains) if (this.orgByDomain.get(lower(d.domainName)) === org.id) this.orgByDomain.delete(lower(d.domainName));
  }

  // ---- projects ----

  getProject(id: string): View<ProjectRecord> | undefined {
    return this.projects.get(id);
  }

  requireProject(id: string, orgId?: string, batch?: WriteBatch): View<ProjectRecord> {
    const project = this.projects.get(id, batch);
    if (!project || (orgId !== undefined && project.orgId !== orgId)) {
      throw notFound('PROJECT-3M9sd', `project ${id} not found`);
    }
    return project;
  }

  async addProject(orgId: string, input: ProjectSettings & { id?: string }): Promise<View<ProjectRecord>> {
    const batch = new WriteBatch(this.editor);
    const project = this.stageProject(orgId, input, batch);
    await batch.commit(this.storage);
    return project;
  }

  stageProject(orgId: string, input: ProjectSettings & { id?: string }, batch: WriteBatch): View<ProjectRecord> {
    this.requireOrg(orgId, batch);
    const name = input.name.trim();
    if (name.length === 0 || name.length > 200) throw invalidArgument('PROJECT-n4m3s', 'project name must have 1-200 characters');
    const id = input.id ?? newId();
    if (this.projects.taken(id)) throw alreadyExists('PROJECT-0kdf2', `project ${id} already exists`);
    const project = stamp<ProjectRecord>(
      {
        id,
        orgId,
        name,
        state: 'PROJECT_STATE_ACTIVE',
        projectRoleAssertion: input.projectRoleAssertion,
        projectRoleCheck: input.projectRoleCheck,
        hasProjectCheck: input.hasProjectCheck,
        privateLabelingSetting: input.privateLabelingSetting,
        roles: [],
        ...(input.resourceUris?.length ? { resourceUris: [...input.resourceUris] } : {}),
        createdAt: 0,
        changedAt: 0,
        sequence: 0,
      },
      true,
    );
    this.stageResourceUris(project, batch);
    this.projects.stage(project, batch);
    return project;
  }

  /**
   * UpdateProject: the settings as given (ZITADEL: omitted flags are false); `resourceUris` only
   * when given (Sesame's field), replacing the list.
   */
  updateProject(projectId: string, orgId: string, change: ProjectSettings): Promise<View<ProjectRecord>> {
    return this.projectChanges.run(projectId, () => decidedAgain(this.storage.directoryReader, this, () => this.changeProject(projectId, orgId, change)));
  }

  private async changeProject(projectId: string, orgId: string, change: ProjectSettings): Promise<View<ProjectRecord>> {
    const batch = new WriteBatch(this.editor);
    const current = this.requireProject(projectId, orgId, batch);
    const name = change.name.trim();
    if (name.length === 0 || name.length > 200) throw invalidArgument('PROJECT-n4m3s', 'project name must have 1-200 characters');
    const { resourceUris, ...settings } = change;
    const next: ProjectRecord = { ...ownRow<ProjectRecord>(current), ...settings, name };
    if (resourceUris !== undefined) {
      if (resourceUris.length > 0) next.resourceUris = [...resourceUris];
      else delete next.resourceUris;
    }
    const updated = stamp<ProjectRecord>(next, false);
    this.stageResourceUris(updated, batch, current);
    this.projects.stage(updated, batch);
    await batch.commit(this.storage);
    return updated;
  }

  /** The project a resource URI is registered on (RFC 8707), if any. */
  projectOfResource(uri: string): View<ProjectRecord> | undefined {
    const id = this.projectByResource.get(uri);
    return id === undefined ? undefined : this.projects.get(id);
  }

  /**
   * Claims the resource URIs `project` registers (each names one project in the instance) until
   * the batch ends; once it commits, the index follows the project's committed record.
   */
  private stageResourceUris(project: View<ProjectRecord>, batch: WriteBatch, before?: View<ProjectRecord>): void {
    const uris = project.resourceUris ?? [];
    // In the store too: what the project gives up is free again, what it registers is its own.
    for (const uri of before?.resourceUris ?? []) if (!uris.includes(uri)) batch.freeKey(directoryKey.resource(uri), project.id);
    for (const uri of uris) {
      batch.takeKey({ key: directoryKey.resource(uri), owner: project.id, taken: () => alreadyExists('PROJECT-R3s0u', `resource ${uri} is already registered on another project`) });
    }
    for (const uri of uris) {
      const owner = this.projectByResource.get(uri) ?? this.claimedResources.get(uri);
      // The owner is another tenant's project, possibly: not named.
      if (owner !== undefined && owner !== project.id) throw alreadyExists('PROJECT-R3s0u', `resource ${uri} is already registered on another project`);
    }
    const claimed = uris.filter((uri) => !this.claimedResources.has(uri));
    for (const uri of claimed) this.claimedResources.set(uri, project.id);
    const release = () => {
      for (const uri of claimed) if (this.claimedResources.get(uri) === project.id) this.claimedResources.delete(uri);
    };
    batch.onRollback(release);
    batch.onCommit(() => {
      release();
      this.reindexResources(project.id);
    });
  }

  /**
   * The index entries of a project, from its record as committed: whichever of two writes to the
   * project committed last (an update, its roles), the index says what the record says.
   */
  private reindexResources(projectId: string): void {
    for (const [uri, owner] of this.projectByResource) if (owner === projectId) this.projectByResource.delete(uri);
    for (const uri of this.projects.get(projectId)?.resourceUris ?? []) this.projectByResource.set(uri, projectId);
  }

  addProjectRoles(projectId: string, orgId: string, roles: ProjectRole[]): Promise<View<ProjectRecord>> {
    return this.projectChanges.run(projectId, () =>
      decidedAgain(this.storage.directoryReader, this, async () => {
        const batch = new WriteBatch(this.editor);
        const project = this.stageProjectRoles(projectId, orgId, roles, batch);
        await batch.commit(this.storage);
        return project;
      }),
    );
  }

  /**
   * RemoveProjectRole: the role goes, and the user grants naming it lose it in the same commit
   * (ZITADEL's cascade). A grant made meanwhile on another thread with the old key names a role the
   * project no longer defines: tokens carry only defined roles (protocol/claims.ts), so it grants nothing.
   */
  removeProjectRole(projectId: string, orgId: string, roleKey: string): Promise<View<ProjectRecord>> {
    return this.projectChanges.run(projectId, () =>
      decidedAgain(this.storage.directoryReader, this, async () => {
        const batch = new WriteBatch(this.editor);
        const project = this.requireProject(projectId, orgId, batch);
        if (!project.roles.some((r) => r.key === roleKey)) throw notFound('PROJECT-R0l3n', `role ${roleKey} not found on project ${projectId} (Errors.Project.Role.NotExisting)`);
        const updated = stamp<ProjectRecord>({ ...ownRow<ProjectRecord>(project), roles: project.roles.filter((r) => r.key !== roleKey) }, false);
        this.projects.stage(updated, batch);
        for (const grant of this.userGrants.valuesIn(batch)) {
          if (grant.projectId !== projectId || !grant.roleKeys.includes(roleKey)) continue;
          this.userGrants.stage(stamp<UserGrantRecord>({ ...ownRow<UserGrantRecord>(grant), roleKeys: grant.roleKeys.filter((k) => k !== roleKey) }, false), batch);
        }
        await batch.commit(this.storage);
        return updated;
      }),
    );
  }

  /** DeactivateProject and ReactivateProject: its apps authenticate nobody while inactive (domain/usable.ts). */
  setProjectState(projectId: string, orgId: string, state: ProjectRecord['state']): Promise<View<ProjectRecord>> {
    return this.projectChanges.run(projectId, () =>
      decidedAgain(this.storage.directoryReader, this, async () => {
        const batch = new WriteBatch(this.editor);
        const project = this.requireProject(projectId, orgId, batch);
        if (project.state === state) {
          throw preconditionFailed(
            'PROJECT-St4te',
            state === 'PROJECT_STATE_INACTIVE' ? 'the project is already deactivated (Errors.Project.NotActive)' : 'the project is not deactivated (Errors.Project.NotInactive)',
          );
        }
        const updated = stamp<ProjectRecord>({ ...ownRow<ProjectRecord>(project), state }, false);
        this.projects.stage(updated, batch);
        await batch.commit(this.storage);
        return updated;
      }),
    );
  }

  /**
   * RemoveProject: the project, its roles, the user grants on it and its members, in one commit;
   * its resource URIs are free again. Its apps go first (the caller removes them: they are the
   * clients actor's), so nothing authenticates for a project that is gone.
   */
  removeProject(projectId: string, orgId: string): Promise<View<ProjectRecord>> {
    return this.projectChanges.run(projectId, () =>
      decidedAgain(this.storage.directoryReader, this, async () => {
        const batch = new WriteBatch(this.editor);
        const project = this.requireProject(projectId, orgId, batch);
        const grants = [...this.userGrants.valuesIn(batch)].filter((g) => g.projectId === projectId);
        const members = [...this.members.valuesIn(batch)].filter((m) => m.scope === `project:${projectId}`);
        this.projects.stageRemoval(projectId, batch);
        for (const { key, owner } of keysOfProject(project)) batch.freeKey(key, owner);
        for (const grant of grants) {
          this.userGrants.stageRemoval(grant.id, batch);
          for (const { key, owner } of keysOfGrant(grant)) batch.freeKey(key, owner);
        }
        for (const member of members) this.members.stageRemoval(member.id, batch);
        batch.onCommit(() => {
          for (const grant of grants) this.unindexGrant(grant);
          for (const member of members) this.unindexMember(member);
          this.reindexResources(projectId);
        });
        await batch.commit(this.storage);
        return project;
      }),
    );
  }

  stageProjectRoles(projectId: string, orgId: string, roles: ProjectRole[], batch: WriteBatch): View<ProjectRecord> {
    const project = this.requireProject(projectId, orgId, batch);
    const keys = new Set(project.roles.map((r) => r.key));
    for (const role of roles) {
      if (keys.has(role.key)) throw alreadyExists('PROJECT-8d9sa', `role ${role.key} already exists on project ${projectId}`);
      keys.add(role.key);
    }
    for (const role of roles) {
      if (role.key.trim().length === 0 || role.key.length > 200) throw invalidArgument('PROJECT-r0l3k', 'role keys must have 1-200 characters');
    }
    const updated = stamp<ProjectRecord>({ ...ownRow<ProjectRecord>(project), roles: [...project.roles, ...roles] }, false);
    batch.onCommit(() => this.reindexResources(projectId));
    this.projects.stage(updated, batch);
    return updated;
  }

  // ---- users ----

  getUser(id: string): View<UserRecord> | undefined {
    return this.users.get(id);
  }

  requireUser(id: string, orgId?: string, batch?: WriteBatch): View<UserRecord> {
    const user = this.users.get(id, batch);
    if (!user || (orgId !== undefined && user.orgId !== orgId)) throw notFound('USER-Ka8f2', `user ${id} not found`);
    return user;
  }

  /** `username@primarydomain` for every domain of the user's org (the user name alone under `userLoginMustBeDomain: false`). */
  loginNames(user: View<UserRecord>): string[] {
    if (user.instanceWideName) return [user.userName];
    const org = this.orgs.get(user.orgId);
    return org ? org.domains.map((d) => `${user.userName}@${d.domainName}`) : [user.userName];
  }

  preferredLoginName(user: View<UserRecord>): string {
    if (user.instanceWideName) return user.userName;
    const org = this.orgs.get(user.orgId);
    return org ? `${user.userName}@${this.primaryDomain(org)}` : user.userName;
  }

  /**
   * Resolves a login name: `username@orgdomain`, or a bare `username` when it is unique in the
   * instance (ZITADEL's machine `client_id` is the user name).
   */
  findUserByLoginName(loginName: string): View<UserRecord> | undefined {
    const name = lower(loginName);
    const at = name.lastIndexOf('@');
    if (at > 0) {
      const orgId = this.orgByDomain.get(name.slice(at + 1));
      const id = orgId && this.userByOrgName.get(`${orgId}\n${name.slice(0, at)}`);
      if (id) return this.users.get(id);
    }
    const ids = this.usersByName.get(name);
    if (ids?.size === 1) return this.users.get(ids.values().next().value!);
    // A name unique in the instance (`userLoginMustBeDomain: false`) is that user's login name.
    for (const id of ids ?? []) {
      const user = this.users.get(id);
      if (user?.instanceWideName) return user;
    }
    return undefined;
  }

  /**
   * The humans whose verified email (or, for a `+` number, verified phone) is `contact`. Whether a
   * login may use them is the login policy's (`disableLoginWithEmail` / `…Phone`), decided by the caller.
   */
  findUsersByContact(contact: string): View<UserRecord>[] {
    const key = contactKey(contact);
    const ids = key === undefined ? undefined : this.usersByContact.get(key);
    return ids ? [...ids].flatMap((id) => this.users.get(id) ?? []) : [];
  }

  /**
   * Takes in a change another thread committed, named by the directory's change feed (every
   * thread's copy): the record is read again as committed and the lookups follow it. False for a store this actor does not hold.
   */
  takeChange(store: DirectoryStore, id: string): boolean {
    switch (store) {
      case 'orgs':
        return retake(
          this.orgs,
          id,
          (org) => this.unindexOrg(org),
          (org) => this.indexOrg(org),
        );
      case 'projects':
        return retake(
          this.projects,
          id,
          (project) => {
            for (const uri of project.resourceUris ?? []) if (this.projectByResource.get(uri) === id) this.projectByResource.delete(uri);
          },
          (project) => {
            for (const uri of project.resourceUris ?? []) this.projectByResource.set(uri, id);
          },
        );
      case 'users':
        return retake(
          this.users,
          id,
          (user) => this.unindexUser(user),
          (user) => this.indexUser(user),
        );
      case 'members':
        return retake(
          this.members,
          id,
          (member) => unindexByUser(this.memberIdsByUser, member),
          (member) => this.indexMember(member),
        );
      case 'userGrants':
        return retake(
          this.userGrants,
          id,
          (grant) => unindexByUser(this.grantIdsByUser, grant),
          (grant) => this.indexGrant(grant),
        );
      case 'pats':
        return retake(
          this.pats,
          id,
          (pat) => {
            const hash = Buffer.from(pat.tokenHash).toString('base64url');
            if (this.patByHash.get(hash) === id) this.patByHash.delete(hash);
          },
          (pat) => this.patByHash.set(Buffer.from(pat.tokenHash).toString('base64url'), id),
        );
      case 'policies':
        return retake(this.policies, id);
      default:
        return false;
    }
  }

  /** The inverse of indexUser: the name and contact lookups no longer find the user. */
  private unindexUser(user: View<UserRecord>): void {
    this.countNameRule(user, -1);
    const name = lower(user.userName);
    const orgName = `${user.orgId}\n${name}`;
    if (this.userByOrgName.get(orgName) === user.id) this.userByOrgName.delete(orgName);
    const named = this.usersByName.get(name);
    named?.delete(user.id);
    if (named?.size === 0) this.usersByName.delete(name);
    for (const key of contactKeys(user)) {
      const ids = this.usersByContact.get(key);
      ids?.delete(user.id);
      if (ids?.size === 0) this.usersByContact.delete(key);
    }
    for (const link of user.human?.idpLinks ?? []) {
      const key = idpLinkKey(link.idpId, link.externalUserId);
      if (this.userByIdpLink.get(key) === user.id) this.userByIdpLink.delete(key);
    }
  }

  private indexUser(user: View<UserRecord>): void {
    this.countNameRule(user, 1);
    const name = lower(user.userName);
    this.userByOrgName.set(`${user.orgId}\n${name}`, user.id);
    let ids = this.usersByName.get(name);
    if (!ids) this.usersByName.set(name, (ids = new Set()));
    ids.add(user.id);
    for (const key of contactKeys(user)) {
      let set = this.usersByContact.get(key);
      if (!set) this.usersByContact.set(key, (set = new Set()));
      set.add(user.id);
    }
    for (const link of user.human?.idpLinks ?? []) this.userByIdpLink.set(idpLinkKey(link.idpId, link.externalUserId), user.id);
  }

  private countNameRule(user: View<UserRecord>, by: 1 | -1): void {
    const counts = this.usersByNameRule.get(user.orgId) ?? { domain: 0, instanceWide: 0 };
    if (user.instanceWideName) counts.instanceWide += by;
    else counts.domain += by;
    if (counts.domain === 0 && counts.instanceWide === 0) this.usersByNameRule.delete(user.orgId);
    else this.usersByNameRule.set(user.orgId, counts);
  }

  /**
   * Takes a unique key (a name, a grant) for a batch not yet committed: another batch staged
   * meanwhile sees it taken, although lookups find the row only once committed. Released either way.
   */
  private claim(claims: Set<string>, key: string, batch: WriteBatch): void {
    claims.add(key);
    const release = () => claims.delete(key);
    batch.onRollback(release);
    batch.onCommit(release);
  }

  private checkNewUser(orgId: string, id: string, userName: string, batch: WriteBatch): void {
    this.requireOrg(orgId, batch);
    if (userName.length === 0 || userName.length > 200) throw invalidArgument('USER-4k9sF', 'userName must have 1-200 characters');
    if (this.users.taken(id)) throw alreadyExists('USER-k2l9S', `user ${id} already exists`);
    const key = `${orgId}\n${lower(userName)}`;
    if (this.userByOrgName.has(key) || this.claimedUserNames.has(key)) {
      throw alreadyExists('USER-Ajd9s', `user name ${userName} is already taken in this organization`);
    }
  }

  async addUser(orgId: string, input: NewHumanUser | NewMachineUser): Promise<View<UserRecord>> {
    const batch = new WriteBatch(this.editor);
    const user = this.stageUser(orgId, input, batch);
    await batch.commit(this.storage);
    return user;
  }

  stageUser(orgId: string, input: NewHumanUser | NewMachineUser, batch: WriteBatch): View<UserRecord> {
    const id = input.id ?? newId();
    const userName = 'person' in input ? input.person.userName : input.userName;
    this.checkNewUser(orgId, id, userName, batch);
    const instanceWide = !this.domainPolicyFor(orgId, batch).userLoginMustBeDomain;
    if (instanceWide) {
      const owner = this.claimedLoginNames.has(lower(userName)) || [...(this.usersByName.get(lower(userName)) ?? [])].some((u) => this.users.get(u)?.instanceWideName);
      if (owner) throw alreadyExists('USER-Ajd9s', `user name ${userName} is already taken in the instance (the domain policy makes it a login name by itself)`);
    }
    const user = stamp<UserRecord>(
      {
        id,
        orgId,
        ...('person' in input ? newHuman(input.person, input.credentials) : { userName: input.userName, state: input.state ?? 'USER_STATE_ACTIVE', machine: input.machine }),
        ...(instanceWide ? { instanceWideName: true as const } : {}),
        // An id chosen by the caller may be a removed user's: nothing that user held comes back with it.
        ...(input.id !== undefined ? { revokedBefore: clock.now() } : {}),
        createdAt: 0,
        changedAt: 0,
        sequence: 0,
      },
      true,
    );
    // The name is taken at once; logins (by name, email or phone) find the user once committed.
    this.claim(this.claimedUserNames, `${orgId}\n${lower(user.userName)}`, batch);
    batch.takeKey({ key: directoryKey.userName(orgId, user.userName), owner: id, taken: () => alreadyExists('USER-Ajd9s', `user name ${user.userName} is already taken in this organization`) });
    if (instanceWide) {
      this.claim(this.claimedLoginNames, lower(user.userName), batch);
      batch.takeKey({ key: directoryKey.loginName(user.userName), owner: id, taken: () => alreadyExists('USER-Ajd9s', `user name ${user.userName} is already taken in the instance`) });
    }
    batch.onCommit(() => this.indexUser(user));
    this.users.stage(user, batch);
    return user;
  }

  /** One metadata entry of an import; an existing key is AlreadyExists (not overwritten). */
  stageUserMetadata(userId: string, orgId: string, key: string, value: Uint8Array, batch: WriteBatch): View<UserRecord> {
    const user = this.requireUser(userId, orgId, batch);
    if (user.metadata && Object.hasOwn(user.metadata, key)) throw alreadyExists('USER-M3t4e', `metadata ${key} already exists`);
    const updated = stamp<UserRecord>({ ...ownRow<UserRecord>(user), metadata: { ...user.metadata, [key]: value } }, false);
    this.users.stage(updated, batch);
    return updated;
  }

  /** SetUserMetadata: adds or replaces one metadata entry of a user (as stored: see changeUser). */
  setUserMetadata(userId: string, key: string, value: Uint8Array): Promise<View<UserRecord>> {
    return this.changeMetadata(userId, (metadata) => ({ ...metadata, [key]: value }));
  }

  /** RemoveUserMetadata: drops one metadata entry of a user; NotFound when it has none by that key. */
  removeUserMetadata(userId: string, key: string): Promise<View<UserRecord>> {
    return this.changeMetadata(userId, (metadata) => {
      // Decided on the row as stored: of two removals at once, one finds it.
      if (!metadata || !Object.hasOwn(metadata, key)) throw notFound('USER-M3t41', `metadata ${key} not found`);
      const { [key]: _removed, ...rest } = metadata;
      return rest;
    });
  }

  /** A user's metadata changed as `next` says, decided on the row as stored. */
  private async changeMetadata(userId: string, next: (metadata: UserRecord['metadata']) => NonNullable<UserRecord['metadata']>): Promise<View<UserRecord>> {
    this.requireUser(userId);
    const after = await this.users.change(
      userId,
      (stored) => {
        if (!stored) return undefined;
        const user = ownRow<UserRecord>(stored);
        return stamp<UserRecord>({ ...user, metadata: next(user.metadata) }, false);
      },
      { by: this.editor },
    );
    return this.requireChanged(userId, after);
  }

  /** Whether a person (or machine user) may sign in and hold tokens: active, in an active org. */
  isActive(user: View<UserRecord> | undefined): user is View<UserRecord> {
    return user !== undefined && user.state === 'USER_STATE_ACTIVE' && this.orgIsActive(user.orgId);
  }

  orgIsActive(orgId: string): boolean {
    return this.orgs.get(orgId)?.state === 'ORG_STATE_ACTIVE';
  }

  // ---- identity provider links ----

  /** The person linked to an account at an identity provider (committed links). */
  findUserByIdpLink(idpId: string, externalUserId: string): View<UserRecord> | undefined {
    const id = this.userByIdpLink.get(idpLinkKey(idpId, externalUserId));
    return id === undefined ? undefined : this.users.get(id);
  }

  /** The person with the link added (checked: a person, at most MAX_IDP_LINKS, not there yet). */
  private withIdpLink(user: View<UserRecord>, link: IdpLink): UserRecord {
    if (!user.human) throw preconditionFailed('USER-Hum4n', 'only people have identity provider links');
    const links = user.human.idpLinks ?? [];
    if (links.some((l) => l.idpId === link.idpId && l.externalUserId === link.externalUserId)) throw alreadyExists('USER-L1nk3', 'the link already exists (Errors.User.ExternalIDP.AlreadyExists)');
    if (links.length >= MAX_IDP_LINKS) throw invalidArgument('USER-L1nkM', `a person has at most ${MAX_IDP_LINKS} identity provider links`);
    const current = ownRow<UserRecord>(user);
    return stamp<UserRecord>({ ...current, human: { ...current.human!, idpLinks: [...links, link] } }, false);
  }

  private linkTaken = () => alreadyExists('USER-L1nk2', 'the account at the identity provider is already linked to a person (Errors.User.ExternalIDP.AlreadyExists)');

  /**
   * Links an account at an identity provider to a person; one account links to one person in the
   * instance (a key the store holds). `still(person)`: the link is made only while it holds of the
   * person as stored (the write is a compare-and-set on the row it was decided on); undefined when not.
   */
  addIdpLink(userId: string, link: IdpLink, orgId?: string): Promise<View<UserRecord>>;
  addIdpLink(userId: string, link: IdpLink, orgId: string | undefined, still: (stored: View<UserRecord>) => boolean): Promise<View<UserRecord> | undefined>;
  addIdpLink(userId: string, link: IdpLink, orgId?: string, still: (stored: View<UserRecord>) => boolean = () => true): Promise<View<UserRecord> | undefined> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const user = this.requireUser(userId, orgId);
      if (!still(user)) return undefined;
      if (this.userByIdpLink.has(idpLinkKey(link.idpId, link.externalUserId))) throw this.linkTaken();
      const updated = this.withIdpLink(user, link);
      await this.users.put(updated, { keys: { take: [{ key: directoryKey.idpLink(link.idpId, link.externalUserId), owner: userId, taken: this.linkTaken }] }, by: this.editor });
      this.unindexUser(user);
      this.indexUser(updated);
      return updated;
    });
  }

  /** An import's link (ZITADEL's `userLinks` and a person's `idps`). */
  stageIdpLink(userId: string, orgId: string, link: IdpLink, batch: WriteBatch): View<UserRecord> {
    const user = this.requireUser(userId, orgId, batch);
    if (this.userByIdpLink.has(idpLinkKey(link.idpId, link.externalUserId))) throw this.linkTaken();
    const updated = this.withIdpLink(user, link);
    batch.takeKey({ key: directoryKey.idpLink(link.idpId, link.externalUserId), owner: userId, taken: this.linkTaken });
    batch.onCommit(() => {
      const now = this.users.get(userId);
      if (now) this.unindexUser(now), this.indexUser(now);
    });
    this.users.stage(updated, batch);
    return updated;
  }

  /** Removes a link; the account signs the person in no more (on every thread once the feed carries it). */
  removeIdpLink(userId: string, idpId: string, externalUserId: string, orgId?: string): Promise<View<UserRecord>> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const user = this.requireUser(userId, orgId);
      const links = user.human?.idpLinks ?? [];
      if (!links.some((l) => l.idpId === idpId && l.externalUserId === externalUserId)) throw notFound('USER-L1nk4', 'the link does not exist (Errors.User.ExternalIDP.NotFound)');
      const current = ownRow<UserRecord>(user);
      const rest = links.filter((l) => !(l.idpId === idpId && l.externalUserId === externalUserId));
      const human = { ...current.human! };
      if (rest.length > 0) human.idpLinks = rest;
      else delete human.idpLinks;
      const updated = stamp<UserRecord>({ ...current, human }, false);
      await this.users.put(updated, { keys: { free: [{ key: directoryKey.idpLink(idpId, externalUserId), owner: userId }] }, by: this.editor });
      this.unindexUser(user);
      this.indexUser(updated);
      return updated;
    });
  }

  /** A person with links to accounts at identity providers, in one commit (ZITADEL's external registration, ImportHumanUser's `idps`). */
  async addUserWithIdpLinks(orgId: string, input: NewHumanUser, links: readonly IdpLink[]): Promise<View<UserRecord>> {
    const batch = new WriteBatch(this.editor);
    let user = this.stageUser(orgId, input, batch);
    for (const link of links) user = this.stageIdpLink(user.id, orgId, link, batch);
    await batch.commit(this.storage);
    return user;
  }

  /**
   * A provider's word on a person at a sign-in (its `isAutoUpdate`): names and language; the email
   * and phone only while the person's own are not verified, so a provider never replaces a
   * verified address (and with it where codes and resets go).
   */
  async updateFromIdp(userId: string, profile: Partial<HumanData['profile']>, email?: HumanData['email'], phone?: HumanData['phone']): Promise<View<UserRecord> | undefined> {
    return this.changeUser(userId, (stored) => {
      const h = stored.human;
      if (!h) return undefined;
      const next: Partial<HumanData> = {};
      const merged = { ...h.profile, ...Object.fromEntries(Object.entries(profile).filter(([, v]) => v)) };
      if (JSON.stringify(merged) !== JSON.stringify(h.profile)) next.profile = merged;
      if (email && !h.email.isEmailVerified && (email.email !== h.email.email || email.isEmailVerified)) next.email = email;
      if (phone?.phone && !h.phone?.isPhoneVerified && phone.phone !== h.phone?.phone) next.phone = phone;
      return Object.keys(next).length > 0 ? { human: next } : undefined;
    });
  }

  // ---- passkeys and security keys ----

  /**
   * Adds a WebAuthn token (a passkey or a security key) of the person; at most MAX_WEBAUTHN_TOKENS,
   * one authenticator once. `still(stored)`: the sign-in it belongs to still stands (undefined if not).
   */
  async addWebAuthnToken(userId: string, token: WebAuthnToken, still: (stored: View<UserRecord>) => boolean = () => true): Promise<View<UserRecord> | undefined> {
    this.requireUser(userId);
    let over = false;
    const after = await this.changeUser(userId, (stored) => {
      over = !still(stored);
      if (over) return undefined;
      if (!stored.human) throw preconditionFailed('USER-Hum4n', 'only people have passkeys and security keys');
      const tokens = stored.human.webauthn ?? [];
      const refused = webauthnTokenRefusal(tokens, token.id);
      if (refused) throw refused;
      // Someone made without a password who adds a passkey can sign in now (ZITADEL's passwordless initialization).
      return { human: { webauthn: [...tokens, token] }, ...(stored.state === 'USER_STATE_INITIAL' && token.kind === 'passwordless' ? { state: 'USER_STATE_ACTIVE' as const } : {}) };
    });
    return over ? undefined : after;
  }

  /**
   * A token signed a sign-in with `counter`: stored if it is ahead of the stored one (or both are
   * zero: authenticators without a counter), decided on the person as stored, so two answers of one
   * assertion on two threads do not both pass. False: a counter behind (a cloned authenticator), or
   * the token is gone.
   */
  async useWebAuthnToken(userId: string, credentialId: string, counter: number, still: (stored: View<UserRecord>) => boolean = () => true): Promise<boolean> {
    let ok = false;
    await this.changeUser(
      userId,
      (stored) => {
        ok = false;
        // The sign-in this key answers for still stands for the person as stored (no lock or reset meanwhile).
        if (!still(stored)) return undefined;
        const tokens = stored.human?.webauthn ?? [];
        const token = tokens.find((t) => t.id === credentialId);
        ok = token !== undefined && (counter > token.counter || (counter === 0 && token.counter === 0));
        if (!ok || counter === token!.counter) return undefined;
        return { human: { webauthn: tokens.map((t) => (t.id === credentialId ? { ...t, counter } : t)) } };
      },
      () => true,
    );
    return ok;
  }

  /** Removes a token by its token id (and of a kind): it signs nothing in from then on. */
  async removeWebAuthnToken(userId: string, tokenId: string, kind: WebAuthnToken['kind'], orgId?: string): Promise<View<UserRecord>> {
    this.requireUser(userId, orgId);
    return this.requireChanged(
      userId,
      await this.changeUser(userId, (stored) => {
        const tokens = stored.human?.webauthn ?? [];
        if (!tokens.some((t) => t.tokenId === tokenId && t.kind === kind))
          throw notFound('USER-W3bA4', `${kind === 'u2f' ? 'security key' : 'passkey'} ${tokenId} not found (Errors.User.WebAuthN.NotFound)`);
        return { human: { webauthn: tokens.filter((t) => t.tokenId !== tokenId) } };
      }),
    );
  }

  /** The person skipped the offer to set up a passkey. */
  async skipPasskeyPrompt(userId: string, at: number): Promise<void> {
    await this.changeUser(userId, (stored) => (stored.human ? { human: { passkeyPromptSkippedAt: at } } : undefined));
  }

  /**
   * Every link to a removed identity provider goes with it (an org's: its people's only), in one
   * commit decided on the people as stored; resolves with the people who were linked.
   */
  removeIdpLinksTo(idpId: string, owner: string): Promise<string[]> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const prefix = `${idpId}\n`;
      const people = new Set<string>();
      for (const [key, userId] of this.userByIdpLink) {
        if (key.startsWith(prefix) && (owner === INSTANCE_POLICY || this.users.get(userId)?.orgId === owner)) people.add(userId);
      }
      const batch = new WriteBatch(this.editor);
      for (const userId of people) {
        const user = this.users.get(userId);
        if (!user?.human) continue;
        const links = user.human.idpLinks ?? [];
        const human = { ...ownRow<UserRecord>(user).human! };
        const rest = links.filter((l) => l.idpId !== idpId);
        if (rest.length > 0) human.idpLinks = rest;
        else delete human.idpLinks;
        for (const link of links) if (link.idpId === idpId) batch.freeKey(directoryKey.idpLink(idpId, link.externalUserId), userId);
        this.users.stage(stamp<UserRecord>({ ...ownRow<UserRecord>(user), human }, false), batch);
        batch.onCommit(() => {
          const now = this.users.get(userId);
          if (now) this.unindexUser(user), this.indexUser(now);
        });
      }
      await batch.commit(this.storage);
      return [...people];
    });
  }

  // ---- memberships ----

  /** The user's committed memberships. */
  memberships(userId: string): View<MemberRecord>[] {
    const out: View<MemberRecord>[] = [];
    for (const id of this.memberIdsByUser.get(userId) ?? []) {
      const member = this.members.get(id);
      if (member) out.push(member);
    }
    return out;
  }

  /** The org a project belongs to (permission rules ask it of project memberships). */
  readonly orgOfProject = (projectId: string): string | undefined => this.projects.get(projectId)?.orgId;

  /** The users of an org who hold roles somewhere (administrators of anything). */
  administratorsIn(orgId: string): View<UserRecord>[] {
    const out: View<UserRecord>[] = [];
    for (const id of this.memberIdsByUser.keys()) {
      const user = this.users.get(id);
      if (user?.orgId === orgId && this.memberships(id).length > 0) out.push(user);
    }
    return out;
  }

  getMember(scope: string, userId: string): View<MemberRecord> | undefined {
    return this.members.get(`${scope}|${userId}`);
  }

  /** In id order (see listOrgs). */
  listMembers(scope: string): View<MemberRecord>[] {
    return inIdOrder([...this.members.values()].filter((m) => m.scope === scope));
  }

  addMember(scope: string, userId: string, roles: string[]): Promise<View<MemberRecord>> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const batch = new WriteBatch(this.editor);
      const member = this.stageMember(scope, userId, roles, batch);
      await batch.commit(this.storage);
      return member;
    });
  }

  stageMember(scope: string, userId: string, roles: string[], batch: WriteBatch): View<MemberRecord> {
    this.requireUser(userId, undefined, batch);
    if (roles.length === 0) throw invalidArgument('MEMBER-3m9Fs', 'at least one role is required');
    const id = `${scope}|${userId}`;
    if (this.members.taken(id)) throw alreadyExists('MEMBER-2jf8s', `user ${userId} is already a member`);
    const member = stamp<MemberRecord>({ id, scope, userId, roles, createdAt: 0, changedAt: 0, sequence: 0 }, true);
    this.indexMember(member);
    batch.onRollback(() => this.unindexMember(member));
    this.members.stage(member, batch);
    if (scope === 'instance' && roles.includes(LAST_OWNER_ROLE)) this.stageOwnerJoining(userId, batch);
    return member;
  }

  /**
   * An instance membership's roles replaced (`roles`) or the membership removed (undefined), staged
   * so that the instance keeps an IAM_OWNER. The decision writes again every IAM_OWNER membership it
   * counted, so two decisions at once that would each leave one owner conflict in the store, and the
   * one decided again counts the other's outcome.
   */
  stageInstanceMembership(userId: string, roles: string[] | undefined, batch: WriteBatch): View<MemberRecord> {
    const id = `instance|${userId}`;
    const member = this.members.get(id, batch);
    if (!member) throw notFound('MEMBER-n0tFd', `user ${userId} is not a member`);
    if (roles?.length === 0) throw invalidArgument('MEMBER-3m9Fs', 'at least one role is required');
    if (member.roles.includes(LAST_OWNER_ROLE) && !roles?.includes(LAST_OWNER_ROLE)) this.stageOwnersKept(userId, batch);
    if (!member.roles.includes(LAST_OWNER_ROLE) && roles?.includes(LAST_OWNER_ROLE)) this.stageOwnerJoining(userId, batch);
    if (roles) {
      const changed = stamp<MemberRecord>({ ...ownRow<MemberRecord>(member), roles }, false);
      this.members.stage(changed, batch);
      return changed;
    }
    this.members.stageRemoval(id, batch);
    batch.onCommit(() => this.unindexMember(member));
    return member;
  }

  /** Whether the user holds IAM_OWNER, as `batch` sees the membership. */
  private ownsInstance(userId: string, batch: WriteBatch): boolean {
    return this.members.get(`instance|${userId}`, batch)?.roles.includes(LAST_OWNER_ROLE) === true;
  }

  /**
   * Someone becomes an instance owner in `batch`: their user row is written again, so a lock,
   * deactivation or removal of them decided meanwhile without the new membership conflicts in the
   * store and is decided again with it (stopActing, removeUser).
   */
  private stageOwnerJoining(userId: string, batch: WriteBatch): void {
    const user = this.users.get(userId, batch);
    if (user) this.users.stage(stamp<UserRecord>({ ...ownRow<UserRecord>(user) }, false), batch);
  }

  /**
   * The instance keeps an IAM_OWNER who can act (an active user), decided in the store: `leaving`
   * stops being one in `batch` (its role, its state or the user itself goes; staged after this
   * call, which counts the owners as they are), refused when no other
   * would be left. Every other such owner's membership and user rows are written again in the
   * batch, so two decisions at once that would each leave one owner conflict in the store, and the
   * one decided again counts the other's outcome (a role taken, a user locked or removed).
   */
  private stageOwnersKept(leaving: string, batch: WriteBatch): void {
    const owners = [...this.members.valuesIn(batch)].filter((m) => m.scope === 'instance' && m.roles.includes(LAST_OWNER_ROLE) && this.isActive(this.users.get(m.userId, batch)));
    const remaining = owners.filter((m) => m.userId !== leaving);
    if (owners.length > 0 && remaining.length === 0) {
      throw preconditionFailed('MEMBER-L4st0', `the last ${LAST_OWNER_ROLE} who can act stays one: make someone else ${LAST_OWNER_ROLE} first`);
    }
    for (const owner of remaining) {
      this.members.stage(stamp<MemberRecord>({ ...ownRow<MemberRecord>(owner) }, false), batch);
      this.users.stage(stamp<UserRecord>({ ...ownRow<UserRecord>(this.users.get(owner.userId, batch)!) }, false), batch);
    }
  }

  /** UpdateMember: the member's roles replaced, decided on the membership as stored. */
  async changeMemberRoles(scope: string, userId: string, roles: string[]): Promise<View<MemberRecord>> {
    if (roles.length === 0) throw invalidArgument('MEMBER-3m9Fs', 'at least one role is required');
    const after = await this.members.change(
      `${scope}|${userId}`,
      (stored) => {
        if (!stored) throw notFound('MEMBER-n0tFd', `user ${userId} is not a member`);
        return stamp<MemberRecord>({ ...ownRow<MemberRecord>(stored), roles }, false);
      },
      { by: this.editor },
    );
    if (!after) throw notFound('MEMBER-n0tFd', `user ${userId} is not a member`);
    return after;
  }

  /** RemoveMember: the user holds no roles in the scope from then on (their tokens' power is read at each use). */
  async removeMember(scope: string, userId: string): Promise<View<MemberRecord>> {
    const member = this.getMember(scope, userId);
    if (!member) throw notFound('MEMBER-n0tFd', `user ${userId} is not a member`);
    this.unindexMember(member);
    try {
      await this.members.remove(member.id, { by: this.editor });
    } catch (error) {
      // A failed write left the membership in place: it is found again.
      if (this.members.get(member.id)) this.indexMember(member);
      throw error;
    }
    return member;
  }

  private indexMember(member: View<MemberRecord>): void {
    indexByUser(this.memberIdsByUser, member);
  }

  private unindexMember(member: View<MemberRecord>): void {
    unindexByUser(this.memberIdsByUser, member);
  }

  // ---- user grants ----

  getUserGrant(id: string): View<UserGrantRecord> | undefined {
    return this.userGrants.get(id);
  }

  /** The user's grants; with `batch`, also those it stages. */
  grantsOf(userId: string, batch?: WriteBatch): View<UserGrantRecord>[] {
    const ids = this.grantIdsByUser.get(userId);
    const grants: View<UserGrantRecord>[] = [];
    if (ids) {
      for (const id of ids) {
        const grant = this.userGrants.get(id, batch);
        if (grant) grants.push(grant);
      }
    }
    return grants;
  }

  async addUserGrant(input: Omit<UserGrantRecord, 'id' | 'createdAt' | 'changedAt' | 'sequence'> & { id?: string }): Promise<View<UserGrantRecord>> {
    const batch = new WriteBatch(this.editor);
    const grant = this.stageUserGrant(input, batch);
    await batch.commit(this.storage);
    return grant;
  }

  stageUserGrant(input: Omit<UserGrantRecord, 'id' | 'createdAt' | 'changedAt' | 'sequence'> & { id?: string }, batch: WriteBatch): View<UserGrantRecord> {
    const user = this.requireUser(input.userId, input.orgId, batch);
    // The grant's own org's projects only: another org's would take a project grant, which Sesame
    // does not have (an import named such projects too, and its users got roles on them).
    const project = this.requireProject(input.projectId, input.orgId, batch);
    const known = new Set(project.roles.map((r) => r.key));
    const unknown = input.roleKeys.filter((k) => !known.has(k));
    if (unknown.length > 0) throw preconditionFailed('USER-4m9sF', `unknown role keys: ${unknown.join(', ')}`);
    const grantKey = `${user.id}\n${input.projectId}\n${input.projectGrantId}`;
    if (this.claimedGrants.has(grantKey) || this.grantsOf(user.id, batch).some((g) => g.projectId === input.projectId && g.projectGrantId === input.projectGrantId)) {
      throw alreadyExists('USER-2n8fS', 'the user already has a grant on this project');
    }
    this.claim(this.claimedGrants, grantKey, batch);
    const grant = stamp<UserGrantRecord>({ ...input, id: input.id ?? newId(), createdAt: 0, changedAt: 0, sequence: 0 }, true);
    batch.takeKey({
      key: directoryKey.grant(user.id, input.projectId, input.projectGrantId),
      owner: grant.id,
      taken: () => alreadyExists('USER-2n8fS', 'the user already has a grant on this project'),
    });
    this.indexGrant(grant);
    batch.onRollback(() => this.unindexGrant(grant));
    this.userGrants.stage(grant, batch);
    return grant;
  }

  /** RemoveUserGrant: the user's roles on the project go (a grant of another user or org is not found). */
  async removeUserGrant(grantId: string, userId: string, orgId: string): Promise<View<UserGrantRecord>> {
    const grant = this.userGrants.get(grantId);
    if (!grant || grant.userId !== userId || grant.orgId !== orgId) throw notFound('USER-Gr4nt', `user grant ${grantId} not found`);
    this.unindexGrant(grant);
    try {
      await this.userGrants.remove(grant.id, { keys: { free: keysOfGrant(grant) }, by: this.editor });
    } catch (error) {
      // A failed write left the grant in place: it is found again.
      if (this.userGrants.get(grant.id)) this.indexGrant(grant);
      throw error;
    }
    return grant;
  }

  /** An org's user grants in id order: a scan of every grant (ListUserGrants). */
  grantsOfOrg(orgId: string): View<UserGrantRecord>[] {
    return inIdOrder([...this.userGrants.values()].filter((grant) => grant.orgId === orgId));
  }

  private indexGrant(grant: View<UserGrantRecord>): void {
    indexByUser(this.grantIdsByUser, grant);
  }

  private unindexGrant(grant: View<UserGrantRecord>): void {
    unindexByUser(this.grantIdsByUser, grant);
  }

  // ---- export ----

  /**
   * The directory at this moment, for an export: each store's rows in id order. Rows are replaced,
   * never changed, and a batch's rows become visible together when it commits, so these lists stay one consistent state
   * however long the export takes (they hold the rows, not copies).
   */
  snapshot(): {
    orgs: View<OrgRecord>[];
    policies: View<PolicyRecord>[];
    projects: View<ProjectRecord>[];
    users: View<UserRecord>[];
    userGrants: View<UserGrantRecord>[];
    members: View<MemberRecord>[];
  } {
    return {
      orgs: inIdOrder(this.orgs.values()),
      policies: inIdOrder(this.policies.values()),
      projects: inIdOrder(this.projects.values()),
      users: inIdOrder(this.users.values()),
      userGrants: inIdOrder(this.userGrants.values()),
      members: inIdOrder(this.members.values()),
    };
  }

  // ---- personal access tokens ----

  getPat(id: string): View<PatRecord> | undefined {
    return this.pats.get(id);
  }

  /** Creates a PAT and returns it with its plaintext token, which is shown once and stored hashed. */
  async addPat(userId: string, expirationDate = FAR_FUTURE): Promise<{ pat: View<PatRecord>; token: string }> {
    const user = this.requireUser(userId);
    if (!user.machine) throw preconditionFailed('USER-Sj8f2', 'personal access tokens are for machine users');
    if (expirationDate <= clock.now()) throw invalidArgument('USER-dk3Jd', 'expirationDate must be in the future');
    const token = newOpaqueToken();
    const pat = stamp<PatRecord>({ id: newId(), userId, orgId: user.orgId, tokenHash: sha256(token), expirationDate, createdAt: 0, changedAt: 0, sequence: 0 }, true);
    const hash = Buffer.from(pat.tokenHash).toString('base64url');
    this.patByHash.set(hash, pat.id);
    try {
      await this.pats.put(pat, { by: this.editor });
    } catch (error) {
      if (!this.pats.has(pat.id)) this.patByHash.delete(hash);
      throw error;
    }
    return { pat, token };
  }

  /** The PATs of a user, oldest first. */
  patsOf(userId: string): View<PatRecord>[] {
    return [...this.pats.values()].filter((p) => p.userId === userId).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  /**
   * Deletes a PAT. It stops authenticating at once (the hash index is dropped before the write);
   * resolves once the removal is durable.
   */
  async removePat(id: string): Promise<void> {
    const pat = this.pats.get(id);
    if (!pat) return;
    const hash = Buffer.from(pat.tokenHash).toString('base64url');
    this.patByHash.delete(hash);
    try {
      await this.pats.remove(id, { by: this.editor });
    } catch (error) {
      // Not removed: it authenticates again.
      if (this.pats.get(id) === pat) this.patByHash.set(hash, id);
      throw error;
    }
  }

  /** The active user a presented PAT belongs to, or undefined. */
  authenticatePat(token: string): { user: View<UserRecord>; pat: View<PatRecord> } | undefined {
    const id = this.patByHash.get(sha256Base64url(token));
    const pat = id ? this.pats.get(id) : undefined;
    if (!pat || pat.expirationDate <= clock.now()) return undefined;
    const user = this.users.get(pat.userId);
    return this.isActive(user) ? { user, pat } : undefined;
  }
}

/** The lookup key of a login by email (lower case) or phone (`+` and digits only); undefined for neither. */
function contactKey(contact: string): string | undefined {
  const text = contact.trim();
  if (text.startsWith('+')) {
    const digits = phoneDigits(text);
    return digits ? `phone:${digits}` : undefined;
  }
  return text.includes('@') ? `email:${lower(text)}` : undefined;
}

const idpLinkKey = (idpId: string, externalUserId: string) => `${idpId}\n${externalUserId}`;

function contactKeys(user: View<UserRecord>): string[] {
  const keys: string[] = [];
  const h = user.human;
  if (h?.email.isEmailVerified && h.email.email) keys.push(`email:${lower(h.email.email)}`);
  const phone = h?.phone?.isPhoneVerified ? contactKey(h.phone.phone) : undefined;
  if (phone) keys.push(phone);
  return keys;
}

/**
 * The directory's reads of orgs, users, projects, grants and tokens. The flows every HTTP thread
 * serves see the directory through these only (OrgsReader, each thread's copy): a flow that tried
 * to change it would not compile; what the flows decide is the store port's, and what the login
 * decides about people is decided in the store too (src/services/login-directory.ts).
 */
export const ORGS_READS = [
  'instanceDomain',
  'instance',
  'getOrg',
  'requireOrg',
  'listOrgs',
  'primaryDomain',
  'primaryDomainOf',
  'customPolicies',
  'hasOwnPolicy',
  'findOrgByDomain',
  'policy',
  'getProject',
  'requireProject',
  'projectOfResource',
  'orgOfProject',
  'getUser',
  'requireUser',
  'loginNames',
  'preferredLoginName',
  'findUserByLoginName',
  'findUsersByContact',
  'findUserByIdpLink',
  'isActive',
  'orgIsActive',
  'memberships',
  'administratorsIn',
  'getMember',
  'listMembers',
  'getUserGrant',
  'grantsOf',
  'getPat',
  'patsOf',
  'authenticatePat',
  'snapshot',
] as const satisfies readonly (keyof OrgsActor)[];
export type OrgsReader = Pick<OrgsActor, (typeof ORGS_READS)[number]>;
