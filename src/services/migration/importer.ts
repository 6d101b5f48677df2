import { z } from 'zod';
import { describeIssues } from '../../zitadel/validation.js';
import type { ClientsActor } from '../../actors/clients.js';
import type { OrgsActor } from '../../actors/orgs.js';
import {
  backChannelLogoutUriProblem,
  lifetimesBeyondLimits,
  toOidcAppConfig,
  unsupportedOidcSettings,
  withinLifetimeLimits,
  withoutUnsupportedOidcSettings,
  type LifetimeLimits,
} from '../../zitadel/oidc-config.js';
import { checkEncodedHash } from '../../domain/password-hashes.js';
import { ORG_ROLES, ROLE_PERMISSIONS } from '../../domain/permissions.js';
import { refuseImportIntoManagementProject } from '../../domain/management-project.js';
import { normalizeOtpSecret, sealOtpSecret } from '../../crypto/otp-secret.js';
import { alreadyExists, invalidArgument, notFound, preconditionFailed } from '../../model/errors.js';
import { providerOfOidcEntry, providerOfSesameEntry } from '../../zitadel/idp-bundle.js';
import type { ProviderSettings } from '../../actors/identity-providers.js';
import { clock } from '../../util/clock.js';
import {
  INSTANCE_POLICY,
  MAX_IDPS,
  usesClientSecret,
  type IdentityProvider,
  type LoginPolicy,
  type LoginPolicyIdp,
  type MessageTexts,
  type OrgState,
  type PolicyTypes,
  type UserState,
} from '../../model/records.js';
import type { Transaction } from '../../actors/transaction.js';
import type { MasterKey } from '../../crypto/master-key.js';
import { newId } from '../../util/ids.js';
import { log } from '../../util/log.js';
import { BUNDLE_POLICIES, type OrgPolicyKind } from '../../zitadel/policies.js';
import { bundleMessageSchema, MAX_MESSAGE_LANGUAGES, MESSAGE_TYPES, setFields } from '../../zitadel/message-texts.js';
import { brokenComplexityRule, complexityRuleText } from '../../domain/password-complexity.js';
import {
  apiAppSchema,
  appKeySchema,
  domainSchema,
  humanUserSchema,
  machineKeySchema,
  machineUserSchema,
  oidcAppSchema,
  orgMemberSchema,
  orgSchema,
  ORG_STATES,
  projectMemberSchema,
  projectRoleSchema,
  projectSchema,
  UNSUPPORTED_LISTS,
  userGrantSchema,
  userMetadataSchema,
} from '../../zitadel/bundle.js';
import { type Deadline, yieldToEventLoop } from './deadline.js';
import { ImportReport, newSuccessOrg, type SuccessOrg } from './result.js';
import type { ImportPhase, ImportProgress } from '../../actors/import-jobs.js';
import { NotAList, type OrgSource } from './source.js';

const POLICY_ERROR_TYPES = new Map(BUNDLE_POLICIES.map((d) => [d.kind, d.errorType]));

/**
 * Imports the organizations of a bundle in ZITADEL's order (docs/compatibility.md §1.2). Phase 1, per org: the
 * org, its policies and domains, users (human, machine) with their metadata and keys, projects,
 * roles, apps and app keys. Phase 2, all orgs: user grants. Phase 3, all orgs: org and project
 * members. Each org's phase-1 items are validated first (pure, with pauses for other requests),
 * then staged into the actors and committed in one LMDB transaction, so an org is imported
 * completely or not at all; its phase-2 and phase-3 items commit together later. A bad item is
 * reported and skipped; an item that already exists is reported and left as it is.
 *
 * An import creates organizations: an org of the bundle that exists already is refused whole
 * (nothing staged for it), unless the request says `addToExistingOrgs`, and then the addition is
 * reported. Nothing is ever imported into the instance's management project.
 */
export interface ImportServices {
  /** The target instance's token lifetimes: an app's own beyond them are reported and dropped. */
  lifetimeLimits: LifetimeLimits;
  /** The target instance's management project (domain/management-project.ts). */
  managementProjectId: string;
  orgs: OrgsActor;
  clients: ClientsActor;
  masterKey: MasterKey;
  /** Hashes a plaintext `password` (worker pool). */
  hashPassword(password: string): Promise<string>;
  /** Mails an imported person what ZITADEL's import does, once committed (absent offline); `passwordless`: a link to register a passkey instead. */
  welcome?(userId: string, passwordless: boolean): Promise<void>;
  /** A new transaction, and its atomic, durable commit. */
  begin(): Transaction;
  commit(batch: Transaction): Promise<void>;
}

const YIELD_EVERY = 256;
const HASH_CONCURRENCY = 16;
const PROJECT_ROLES = Object.keys(ROLE_PERMISSIONS).filter((r) => r.startsWith('PROJECT_'));

type Element = Record<string, unknown>;
const userLinkSchema = z.object({
  userId: z.string().trim().min(1).max(200),
  idpId: z.string().trim().min(1).max(200),
  providedUserId: z.string().trim().min(1).max(200),
  providedUserName: z.string().max(200).default(''),
});
const asObject = (v: unknown): Element => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Element) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

interface Parsed<T> {
  value: T;
  index: number;
}

class OrgImport {
  readonly success: SuccessOrg;
  /** False when the org could not be created and does not exist: the rest of it is skipped. */
  usable = true;

  constructor(
    readonly source: OrgSource,
    readonly orgId: string,
  ) {
    this.success = newSuccessOrg(orgId);
  }
}

/** What the request asks beyond the bundle. */
export interface ImportOptions {
  /** Sesame's `addToExistingOrgs`: add to orgs of the bundle that exist instead of refusing them. */
  addToExistingOrgs: boolean;
  /** Identity provider ids of the bundle → the target's (Sesame's `idpIdMap`). */
  idpIdMap?: Readonly<Record<string, string>>;
  /** Told how far the import is: at each org and phase (`boundary`), and often in between. */
  onProgress?: (progress: ImportProgress, boundary: boolean) => void;
}

export class Importer {
  readonly report = new ImportReport();
  private steps = 0;
  /** Batches committed so far. */
  private writes = 0;
  /** What onProgress is told. */
  private phase: ImportPhase = 'orgs';
  private orgsTotal = 0;
  private orgsDone = 0;
  private readonly imported: OrgImport[] = [];

  constructor(
    private readonly services: ImportServices,
    private readonly deadline: Deadline,
    private readonly options: ImportOptions = { addToExistingOrgs: false },
  ) {}

  /** Refuses an item that would write into the management project (reported by the caller's attempt). */
  private outsideManagementProject(projectId: string): void {
    refuseImportIntoManagementProject(projectId, this.services.managementProjectId);
  }

  /** An app's project: named, and not the management project. */
  private targetProject(projectId: string | undefined): string {
    const id = requireProjectId(projectId);
    this.outsideManagementProject(id);
    return id;
  }

  /** What a timeout leaves behind, for its error message. */
  private progress(): string {
    if (this.writes === 0) return 'nothing was imported';
    return `${this.writes} of the import's writes (an org's objects, or its grants or members) were committed before; importing the same bundle again with addToExistingOrgs adds the rest`;
  }

  /** Every YIELD_EVERY steps: let other requests run, and stop when the time is up. */
  private async step(): Promise<void> {
    if (++this.steps % YIELD_EVERY !== 0) return;
    this.tell(false);
    await yieldToEventLoop();
    this.deadline.check(this.progress());
  }

  /** Tells onProgress where the import is: the orgs done, and what their committed batches brought in. */
  private tell(boundary: boolean): void {
    if (!this.options.onProgress) return;
    const sum = (count: (org: SuccessOrg) => number) => this.imported.reduce((n, org) => n + (org.usable ? count(org.success) : 0), 0);
    this.options.onProgress(
      {
        phase: this.phase,
        orgsTotal: this.orgsTotal,
        orgsDone: this.orgsDone,
        users: sum((o) => o.humanUserIds.length + o.machineUserIds.length),
        projects: sum((o) => o.projectIds.length),
        apps: sum((o) => o.oidcAppIds.length + o.apiAppIds.length),
        errors: this.report.errors.length,
      },
      boundary,
    );
  }

  /** Validates every element of a list field; bad ones are reported and skipped. */
  private async parseList<S extends z.ZodType>(org: OrgImport, field: string, schema: S, type: string, idOf: (element: Element) => string): Promise<Parsed<z.output<S>>[]> {
    let spans;
    try {
      spans = org.source.list(field);
    } catch (error) {
      if (!(error instanceof NotAList)) throw error;
      this.report.error(type, org.orgId, 'IMPORT-L1st0', error.message);
      return [];
    }
    const out: Parsed<z.output<S>>[] = [];
    for (const [index, span] of spans.entries()) {
      await this.step();
      let raw: unknown;
      try {
        raw = org.source.element(field, span);
      } catch (error) {
        this.report.failure(type, '', error);
        continue;
      }
      const result = schema.safeParse(raw);
      if (result.success) {
        out.push({ value: result.data, index });
        continue;
      }
      const problems = describeIssues(result.error.issues, 'value', 3);
      this.report.error(type, idOf(asObject(raw)), 'IMPORT-V4l1d', `invalid ${field}[${index}]: ${problems}`);
    }
    return out;
  }

  /** A single (non-list) field; undefined when absent, reported when invalid. */
  private parseField<S extends z.ZodType>(org: OrgImport, field: string, schema: S, type: string): z.output<S> | undefined {
    let raw: unknown;
    try {
      raw = org.source.value(field);
    } catch (error) {
      this.report.failure(type, org.orgId, error);
      return undefined;
    }
    if (raw === undefined) return undefined;
    const result = schema.safeParse(raw);
    if (result.success) return result.data;
    this.report.error(type, org.orgId, 'IMPORT-V4l1d', `invalid ${field}: ${describeIssues(result.error.issues, 'value', 3)}`);
    return undefined;
  }

  /**
   * The org's policies in the bundle (src/zitadel/policies.ts), in the import's order, as Sesame
   * stores them: what it cannot enforce is left out and reported, the rest still applies (skipping
   * a policy whole would fall back to the defaults, e.g. open registration).
   */
  private parsePolicies(org: OrgImport): Map<OrgPolicyKind, PolicyTypes[OrgPolicyKind]> {
    const policies = new Map<OrgPolicyKind, PolicyTypes[OrgPolicyKind]>();
    for (const definition of BUNDLE_POLICIES) {
      const input = this.parseField(org, definition.bundleField!, definition.schema, definition.errorType);
      if (input === undefined) continue;
      const { policy, unsupported } = definition.toPolicy(input);
      for (const problem of unsupported) this.report.error(definition.errorType, org.orgId, 'IMPORT-Unsup2', `not supported by Sesame, left out: ${problem}`);
      policies.set(definition.kind, policy);
    }
    return policies;
  }

  /** Every provider id in use (an imported provider keeps its id: none may take another owner's). */
  private providerIdsInUse(): Set<string> {
    const { orgs } = this.services;
    const ids = this.instanceIdps();
    for (const org of orgs.listOrgs()) {
      if (orgs.hasOwnPolicy('idps', org.id)) for (const p of orgs.policy('idps', org.id).policy.providers) ids.add(p.id);
    }
    return ids;
  }

  /** The instance's identity providers (a bundle's links and login policy may name them). */
  private instanceIdps(): Set<string> {
    const { orgs } = this.services;
    return new Set(orgs.hasOwnPolicy('idps', INSTANCE_POLICY) ? orgs.policy('idps', INSTANCE_POLICY).policy.providers.map((p) => p.id) : []);
  }

  /** A bundle's login policy's providers, renamed by idpIdMap: the org's own (imported) or the instance's; any other is reported and left out. */
  private offeredIdps(orgId: string, idps: readonly LoginPolicyIdp[], orgIdps: ReadonlySet<string>, instanceIdps: ReadonlySet<string>): LoginPolicyIdp[] {
    const out: LoginPolicyIdp[] = [];
    for (const entry of idps) {
      const idpId = this.options.idpIdMap?.[entry.idpId] ?? entry.idpId;
      if (orgIdps.has(idpId)) out.push({ idpId, ownerType: 'IDP_OWNER_TYPE_ORG' });
      else if (instanceIdps.has(idpId)) out.push({ idpId, ownerType: 'IDP_OWNER_TYPE_SYSTEM' });
      else this.report.error('login_policy', orgId, 'IMPORT-1dp01', `idps: identity provider ${entry.idpId} is neither in the bundle nor the target's (idpIdMap maps it to one); left out`);
    }
    return out;
  }

  /** The org's providers: Sesame's `sesameIdps` (every kind), then ZITADEL's `oidcIdps` not among them. */
  private async parseProviders(org: OrgImport): Promise<{ id: string; settings: ProviderSettings; secret?: string | undefined }[]> {
    const out: { id: string; settings: ProviderSettings; secret?: string | undefined }[] = [];
    const inUse = this.providerIdsInUse();
    const add = (type: string, raw: unknown, parse: (raw: unknown) => { id: string; settings: ProviderSettings; secret?: string | undefined; unsupported?: string[] }) => {
      try {
        const { unsupported, ...provider } = parse(raw);
        if (out.some((p) => p.id === provider.id)) return;
        if (inUse.has(provider.id)) throw alreadyExists('IDP-4n0fs', `identity provider ${provider.id} already exists`);
        for (const problem of unsupported ?? []) this.report.error(type, provider.id, 'IMPORT-Unsup2', `not supported by Sesame, left out: ${problem}`);
        out.push(provider);
      } catch (error) {
        this.report.failure(type, str(asObject(raw).idpId), error);
      }
    };
    for (const { value } of await this.parseList(org, 'sesameIdps', z.unknown(), 'oidc_idp', (e) => str(e.idpId))) add('oidc_idp', value, providerOfSesameEntry);
    for (const { value } of await this.parseList(org, 'oidcIdps', z.unknown(), 'oidc_idp', (e) => str(e.idpId))) add('oidc_idp', value, providerOfOidcEntry);
    return out;
  }

  /** The org's custom message texts: the nine `*Messages` lists, one record (undefined: none). */
  private async parseMessageTexts(org: OrgImport): Promise<MessageTexts | undefined> {
    const texts: MessageTexts = {};
    let any = false;
    for (const type of MESSAGE_TYPES) {
      if (!type.bundleField) continue;
      for (const { value } of await this.parseList(org, type.bundleField, bundleMessageSchema, type.errorType, (e) => `${org.orgId}_${str(e.language)}`)) {
        const { language, ...fields } = value;
        const ofType = (texts[type.kind] ??= {});
        if (!(language in ofType) && Object.keys(ofType).length >= MAX_MESSAGE_LANGUAGES) {
          this.report.error(type.errorType, `${org.orgId}_${language}`, 'IMPORT-L4ng2', `texts in more than ${MAX_MESSAGE_LANGUAGES} languages; this one was not imported`);
          continue;
        }
        ofType[language] = setFields(fields);
        any = true;
      }
    }
    return any ? texts : undefined;
  }

  /** Bundle parts Sesame does not model: one error per element, nothing imported. */
  private async reportUnsupported(org: OrgImport): Promise<void> {
    for (const part of UNSUPPORTED_LISTS) {
      let spans;
      try {
        spans = org.source.list(part.field);
      } catch (error) {
        if (error instanceof NotAList) this.report.error(part.type, org.orgId, 'IMPORT-L1st0', error.message);
        continue;
      }
      for (const span of spans) {
        await this.step();
        let element: Element = {};
        try {
          element = asObject(org.source.element(part.field, span));
        } catch {
          /* reported with an empty id */
        }
        this.report.error(part.type, part.id(org.orgId, element), 'IMPORT-Unsup1', `Sesame does not support ${part.what}; the ${part.field} entry was not imported`);
      }
    }
  }

  async run(sources: readonly OrgSource[]): Promise<ImportReport> {
    const imports = this.imported;
    this.orgsTotal = sources.length;
    this.tell(true);
    for (const [index, source] of sources.entries()) {
      this.deadline.check(this.progress());
      const org = await this.phase1(source, index);
      if (org) imports.push(org);
      // An org refused before anything was staged is done too.
      this.orgsDone = index + 1;
      this.tell(true);
    }
    this.phase = 'grants';
    this.tell(true);
    for (const org of imports) await this.phase2(org);
    this.phase = 'members';
    this.tell(true);
    for (const org of imports) await this.phase3(org);
    for (const org of imports) if (org.usable) this.report.orgs.push(org.success);
    return this.report;
  }

  // ---- phase 1: one org, atomically ----

  private async phase1(source: OrgSource, index: number): Promise<OrgImport | undefined> {
    const { orgs, clients } = this.services;
    const read = (field: string): unknown => {
      try {
        return source.value(field);
      } catch {
        return undefined; // e.g. nested too deep: treated as absent, and reported below where it matters
      }
    };
    const orgIdValue = read('orgId');
    const orgId = typeof orgIdValue === 'string' ? orgIdValue.trim() : '';
    if (orgId.length === 0 || orgId.length > 200) {
      this.report.error('org', '', 'IMPORT-Org01', `orgs[${index}]: orgId is required (a string of 1-200 characters)`);
      return undefined;
    }
    const org = new OrgImport(source, orgId);
    // Decided before anything of the org is read or staged, so a refused org costs nothing and
    // leaves nothing: no phase-1 batch, and (not usable) no grants or members later. Staging below
    // refuses an org created meanwhile (stageOrg: AlreadyExists), so this cannot be raced.
    const exists = orgs.getOrg(orgId) !== undefined;
    if (exists && !this.options.addToExistingOrgs) {
      this.report.error(
        'org',
        orgId,
        'ORG-lapo2m',
        `organization ${orgId} already exists; nothing was imported into it (an import creates organizations: to add to an existing one, send "addToExistingOrgs": true)`,
      );
      org.usable = false;
      return org;
    }
    const orgFields = this.parseField(org, 'org', orgSchema, 'org');
    const stateValue = read('orgState');
    const orgState: OrgState = stateValue === 'ORG_STATE_INACTIVE' || stateValue === ORG_STATES.indexOf('ORG_STATE_INACTIVE') ? 'ORG_STATE_INACTIVE' : 'ORG_STATE_ACTIVE';

    // Validate everything first (pure), so the staging below is quick and synchronous.
    const policies = this.parsePolicies(org);
    const messageTexts = await this.parseMessageTexts(org);
    const providers = await this.parseProviders(org);
    const userLinks = await this.parseList(org, 'userLinks', userLinkSchema, 'user_link', (e) => `${str(e.userId)}_${str(e.idpId)}`);
    const domains = await this.parseList(org, 'domains', domainSchema, 'domain', (e) => `${orgId}_${str(e.domainName)}`);
    const humans = await this.parseHumans(org);
    const machines = await this.parseList(org, 'machineUsers', machineUserSchema, 'machine_user', (e) => str(e.userId) || str(asObject(e.user).userId));
    const metadata = await this.parseList(org, 'userMetadata', userMetadataSchema, 'user_metadata', (e) => `${str(e.id)}_${str(e.key)}`);
    const machineKeys = await this.parseList(org, 'machineKeys', machineKeySchema, 'machine_user_key', (e) => str(e.keyId));
    const projects = await this.parseList(org, 'projects', projectSchema, 'project', (e) => str(e.projectId));
    const oidcApps = await this.parseList(org, 'oidcApps', oidcAppSchema, 'oidc_app', (e) => str(e.appId));
    const apiApps = await this.parseList(org, 'apiApps', apiAppSchema, 'api_app', (e) => str(e.appId));
    const appKeys = await this.parseList(org, 'appKeys', appKeySchema, 'app_key', (e) => str(e.id));
    const roles = await this.parseList(org, 'projectRoles', projectRoleSchema, 'project_role', (e) => `${str(e.projectId)}_${str(e.roleKey)}`);
    await this.reportUnsupported(org);
    // Plain passwords meet the org's complexity policy (the bundle's, else the one in force).
    const complexity = (policies.get('passwordComplexity') as PolicyTypes['passwordComplexity'] | undefined) ?? orgs.policy('passwordComplexity', orgId).policy;
    const acceptable = humans.filter(({ id, item }) => {
      const rule = item.user.password ? brokenComplexityRule(item.user.password, complexity) : undefined;
      if (rule)
        this.report.error('human_user', id, 'IMPORT-Cmplx1', `the password does not meet the password complexity policy: it needs ${complexityRuleText(rule, complexity)}; the user was not imported`);
      return rule === undefined;
    });
    const passwordHashes = await this.hashPlaintextPasswords(acceptable);
    this.deadline.check(this.progress());

    // Stage synchronously: nothing else runs between the checks and the writes. What is staged is
    // seen through the batch only (the org's own later items find it), by others once committed.
    const batch = this.services.begin();
    // The import itself, beside the events of what it adds: the log says these came in by an import.
    batch.addEvent({ type: 'org.imported', aggregateType: 'org', aggregateId: org.orgId, resourceOwner: org.orgId });
    const { success } = org;
    const attempt = (type: string, id: string, stage: () => void) => {
      try {
        stage();
      } catch (error) {
        this.report.failure(type, id, error);
      }
    };

    if (exists) {
      // Asked for (addToExistingOrgs): reported all the same, so nobody takes it for a new org.
      this.report.error('org', orgId, 'IMPORT-Exist1', `organization ${orgId} already exists; the bundle's parts were added to it as addToExistingOrgs asks, existing ones were left as they are`);
    } else if (!orgFields && source.has('org')) {
      org.usable = false;
      return org;
    } else {
      try {
        // Without `org.name` (zitadel-tools' bundles) the org is named after its id.
        orgs.stageOrg({ id: orgId, name: orgFields?.name ?? orgId, state: orgState }, batch);
      } catch (error) {
        this.report.failure('org', orgId, error);
        org.usable = false;
        return org;
      }
    }

    // The org's identity providers (ids kept, as ZITADEL keeps them), before what refers to them.
    const orgIdps = new Set<string>();
    const instanceIdps = this.instanceIdps();
    if (providers.length > 0) {
      attempt('oidc_idp', orgId, () => {
        const now = clock.now();
        const list: IdentityProvider[] = providers.slice(0, MAX_IDPS).map((p) => ({
          ...p.settings,
          id: p.id,
          ...(p.secret ? { clientSecretSealed: this.services.masterKey.encrypt(Buffer.from(p.secret, 'utf8')) } : {}),
          createdAt: now,
          changedAt: now,
          sequence: 1,
        }));
        for (const p of providers.slice(MAX_IDPS)) this.report.error('oidc_idp', p.id, 'IDP-m4xN', `at most ${MAX_IDPS} identity providers per organization; this one was not imported`);
        orgs.stagePolicy('idps', orgId, { providers: list }, batch);
        for (const p of list) orgIdps.add(p.id), success.oidcIpds.push(p.id);
      });
    }
    const login = policies.get('login') as LoginPolicy | undefined;
    if (login?.idps?.length) policies.set('login', { ...login, idps: this.offeredIdps(orgId, login.idps, orgIdps, instanceIdps) });

    for (const [kind, policy] of policies) {
      attempt(POLICY_ERROR_TYPES.get(kind)!, orgId, () => {
        orgs.stagePolicy(kind, orgId, policy, batch);
        // A bundle's label policy is the one in force (ZITADEL's import activates it), and its preview.
        if (kind === 'label') orgs.stagePolicy('labelPreview', orgId, policy as PolicyTypes['label'], batch);
      });
    }

    if (messageTexts) attempt('init_message', orgId, () => orgs.stagePolicy('messageTexts', orgId, messageTexts, batch));

    // `validateOrgDomains` off: a domain is verified as it is added (ZITADEL's AddOrgDomain).
    const domainPolicy = (policies.get('domain') as PolicyTypes['domain'] | undefined) ?? orgs.policy('domain', orgId).policy;
    for (const { value: d } of domains) {
      attempt('domain', `${orgId}_${d.domainName}`, () => {
        const domain = domainPolicy.validateOrgDomains ? d : { ...d, isVerified: true };
        if (orgs.stageOrgDomain(orgId, domain, batch)) success.domains.push(d.domainName.toLowerCase());
      });
    }

    for (const plan of acceptable) {
      const { id, item } = plan;
      attempt('human_user', id, () => {
        if (item.state === 'USER_STATE_DELETED') throw preconditionFailed('IMPORT-Del01', 'deleted users are not imported');
        const passwordHash = item.user.password ? passwordHashes.get(id) : item.user.hashedPassword?.value || undefined;
        orgs.stageUser(
          orgId,
          {
            id,
            person: item.user,
            credentials: {
              passwordHash,
              passwordChangeRequired: item.user.passwordChangeRequired,
              otpSecretSealed: plan.otpSecret ? sealOtpSecret(this.services.masterKey, plan.otpSecret) : undefined,
              // A person with a link but no password signs in at the provider: active, as in ZITADEL.
              state: item.state === 'USER_STATE_UNSPECIFIED' ? (!passwordHash && item.user.idps.length > 0 ? 'USER_STATE_ACTIVE' : undefined) : (item.state as UserState),
            },
          },
          batch,
        );
        success.humanUserIds.push(id);
      });
    }

    // Links to accounts at identity providers: a person's `idps` and the org's `userLinks`.
    const linked = new Set<string>();
    const link = (userId: string, bundleIdpId: string, externalUserId: string, userName: string) =>
      attempt('user_link', `${userId}_${bundleIdpId}`, () => {
        const idpId = this.options.idpIdMap?.[bundleIdpId] ?? bundleIdpId;
        if (!orgIdps.has(idpId) && !instanceIdps.has(idpId)) {
          throw notFound('IMPORT-1dp02', `identity provider ${bundleIdpId} is neither in the bundle nor the target's (idpIdMap maps it to one); the link was not imported`);
        }
        const key = `${idpId}\n${externalUserId}`;
        if (linked.has(key)) throw preconditionFailed('USER-L1nk2', 'the account at the identity provider is linked to another person of the bundle');
        orgs.stageIdpLink(userId, orgId, { idpId, externalUserId, userName }, batch);
        linked.add(key);
        success.userLinks.push({ userId, externalUserId, displayName: userName, idpId });
      });
    for (const { id, item } of acceptable) {
      if (!success.humanUserIds.includes(id)) continue;
      for (const idp of item.user.idps) link(id, idp.configId, idp.externalUserId, idp.displayName);
    }
    for (const { value: l } of userLinks) link(l.userId, l.idpId, l.providedUserId, l.providedUserName);

    for (const { value: m } of machines) {
      const id = m.userId || m.user.userId || newId();
      attempt('machine_user', id, () => {
        if (m.state === 'USER_STATE_DELETED') throw preconditionFailed('IMPORT-Del01', 'deleted users are not imported');
        const { userName, name, description, accessTokenType } = m.user;
        const state: UserState = m.state === 'USER_STATE_UNSPECIFIED' ? 'USER_STATE_ACTIVE' : (m.state as UserState);
        orgs.stageUser(orgId, { id, userName, state, machine: { name, description, accessTokenType } }, batch);
        if (m.clientSecretSha256) clients.stageMachineSecret(id, m.clientSecretSha256, batch);
        success.machineUserIds.push(id);
      });
    }

    for (const { value: md } of metadata) {
      attempt('user_metadata', `${md.id}_${md.key}`, () => {
        orgs.stageUserMetadata(md.id, orgId, md.key, new Uint8Array(md.value), batch);
        success.userMetadata.push({ userId: md.id, key: md.key });
      });
    }

    for (const { value: k } of machineKeys) {
      attempt('machine_user_key', k.keyId, () => {
        const user = orgs.requireUser(k.userId, orgId, batch);
        if (!user.machine) throw preconditionFailed('USER-Mach1', `user ${k.userId} is not a machine user`);
        clients.stageMachineKey(user, { id: k.keyId, expirationDate: k.expirationDate, publicKeyPem: k.publicKey }, batch);
        success.machineKeys.push(k.keyId);
      });
    }

    for (const { value: p } of projects) {
      attempt('project', p.projectId, () => {
        this.outsideManagementProject(p.projectId);
        orgs.stageProject(orgId, { id: p.projectId, ...p.project }, batch);
        success.projectIds.push(p.projectId);
      });
    }

    for (const { value: r } of roles) {
      attempt('project_role', `${r.projectId}_${r.roleKey}`, () => {
        this.outsideManagementProject(r.projectId);
        orgs.stageProjectRoles(r.projectId, orgId, [{ key: r.roleKey, displayName: r.displayName, group: r.group }], batch);
        success.projectRoles.push(`${r.projectId}_${r.roleKey}`);
      });
    }

    for (const { value: a } of oidcApps) {
      attempt('oidc_app', a.appId, () => {
        const { projectId, name, ...config } = a.app;
        const project = orgs.requireProject(this.targetProject(projectId), orgId, batch);
        // What Sesame cannot honour is reported and dropped; the app itself is imported.
        for (const { message } of unsupportedOidcSettings(config)) {
          this.report.error('oidc_app', a.appId, 'IMPORT-Unsup1', `${message}; the app was imported without it`);
        }
        for (const { message } of lifetimesBeyondLimits(config, this.services.lifetimeLimits)) {
          this.report.error('oidc_app', a.appId, 'IMPORT-L1fe1', `${message}; the app was imported with the instance's`);
        }
        const badLogoutUri = backChannelLogoutUriProblem(config.backChannelLogoutUri, config.devMode);
        if (badLogoutUri) this.report.error('oidc_app', a.appId, 'IMPORT-Bcl01', `${badLogoutUri}; the app was imported without it`);
        const supported = withoutUnsupportedOidcSettings(badLogoutUri ? { ...config, backChannelLogoutUri: '' } : config);
        const oidc = toOidcAppConfig(withinLifetimeLimits(supported, this.services.lifetimeLimits), this.services.lifetimeLimits);
        // Imports take an instance owner (or the operator, offline), who vouches for the receiver.
        clients.stageApp(project, { id: a.appId, clientId: a.clientId, name, oidc, secretHash: secretFor(a.clientSecretSha256, oidc.authMethodType), logoutReceiverByInstance: true }, batch);
        success.oidcAppIds.push(a.appId);
      });
    }

    for (const { value: a } of apiApps) {
      attempt('api_app', a.appId, () => {
        const { projectId, name, authMethodType } = a.app;
        const project = orgs.requireProject(this.targetProject(projectId), orgId, batch);
        clients.stageApp(project, { id: a.appId, clientId: a.clientId, name, api: { authMethodType }, secretHash: secretFor(a.clientSecretSha256, authMethodType) }, batch);
        success.apiAppIds.push(a.appId);
      });
    }

    for (const { value: k } of appKeys) {
      attempt('app_key', k.id, () => {
        const app = clients.getApp(k.appId, batch);
        if (!app || app.orgId !== orgId || (k.projectId && app.projectId !== k.projectId)) throw notFound('APP-Jd8sa', `application ${k.appId} not found`);
        // A key for an app there would let whoever holds its private key act as that app.
        this.outsideManagementProject(app.projectId);
        clients.stageAppKey(app, { id: k.id, expirationDate: k.expirationDate, publicKeyPem: k.publicKey }, batch);
        success.appKeys.push(k.id);
      });
    }

    await this.commit(org, batch, 'org', orgId);
    if (org.usable && this.services.welcome) {
      const passwordless = new Set(acceptable.filter((h) => h.item.user.requestPasswordlessRegistration).map((h) => h.id));
      for (const id of success.humanUserIds) {
        this.deadline.check(this.progress());
        await this.services.welcome(id, passwordless.has(id));
      }
    }
    return org;
  }

  private async commit(org: OrgImport, batch: Transaction, type: string, id: string): Promise<void> {
    const size = batch.size;
    try {
      await this.services.commit(batch);
      if (size > 0) this.writes++;
    } catch (error) {
      // Nothing of this batch was written; the memory changes were taken back.
      this.commitFailed(type, id, 'the organization', error);
      if (type === 'org') org.usable = false;
    }
  }

  private async parseHumans(org: OrgImport) {
    const items = await this.parseList(org, 'humanUsers', humanUserSchema, 'human_user', (e) => str(e.userId) || str(asObject(e.user).userId));
    const plans: { id: string; item: (typeof items)[number]['value']; otpSecret?: string }[] = [];
    for (const { value: item } of items) {
      const id = item.userId || item.user.userId || newId();
      const encoded = item.user.hashedPassword?.value;
      if (!item.user.password && encoded) {
        try {
          checkEncodedHash(encoded);
        } catch (error) {
          this.report.failure('human_user', id, error);
          continue;
        }
      }
      let otpSecret: string | undefined;
      if (item.user.otpCode) {
        otpSecret = normalizeOtpSecret(item.user.otpCode);
        if (!otpSecret) this.report.error('human_user_otp', id, 'IMPORT-Otp01', 'otpCode is not a base32 TOTP secret; the user was imported without it');
      }
      if (item.user.recoveryCodes.length > 0) {
        this.report.error('human_user_recovery_codes', id, 'IMPORT-Unsup1', 'Sesame does not support recovery codes; they were not imported');
      }
      plans.push(otpSecret ? { id, item, otpSecret } : { id, item });
    }
    return plans;
  }

  /** Plaintext `password`s are hashed in the worker pool before anything is staged. */
  private async hashPlaintextPasswords(humans: { id: string; item: { user: { password: string } } }[]): Promise<Map<string, string>> {
    const hashes = new Map<string, string>();
    const pending = humans.filter((h) => h.item.user.password);
    for (let i = 0; i < pending.length; i += HASH_CONCURRENCY) {
      this.deadline.check(this.progress());
      const chunk = pending.slice(i, i + HASH_CONCURRENCY);
      const results = await this.deadline.race(Promise.all(chunk.map((h) => this.services.hashPassword(h.item.user.password))), this.progress());
      chunk.forEach((h, k) => {
        hashes.set(h.id, results[k]!);
      });
    }
    return hashes;
  }

  // ---- phase 2: user grants ----

  private async phase2(org: OrgImport): Promise<void> {
    if (!org.usable) return;
    this.deadline.check(this.progress());
    const grants = await this.parseList(org, 'userGrants', userGrantSchema, 'user_grant', (e) => `${org.orgId}_${str(e.projectId)}_${str(e.userId)}`);
    const { orgs } = this.services;
    const batch = this.services.begin();
    const staged: { projectId: string; userId: string }[] = [];
    for (const { value: g } of grants) {
      try {
        if (g.projectGrantId) throw notFound('PROJECT-Gr4nt', `project grant ${g.projectGrantId} not found (Sesame does not support project grants)`);
        this.outsideManagementProject(g.projectId);
        orgs.stageUserGrant({ userId: g.userId, orgId: org.orgId, projectId: g.projectId, projectGrantId: '', roleKeys: [...new Set(g.roleKeys)] }, batch);
        staged.push({ projectId: g.projectId, userId: g.userId });
      } catch (error) {
        this.report.failure('user_grant', `${org.orgId}_${g.projectId}_${g.userId}`, error);
      }
    }
    await this.commitLater(org, batch, () => {
      for (const g of staged) org.success.userGrants.push(g);
    });
  }

  // ---- phase 3: members ----

  private async phase3(org: OrgImport): Promise<void> {
    if (!org.usable) return;
    this.deadline.check(this.progress());
    const { orgs } = this.services;
    const orgMembers = await this.parseList(org, 'orgMembers', orgMemberSchema, 'org_member', (e) => `${org.orgId}_${str(e.userId)}`);
    const projectMembers = await this.parseList(org, 'projectMembers', projectMemberSchema, 'project_member', (e) => `${org.orgId}_${str(e.projectId)}_${str(e.userId)}`);
    const batch = this.services.begin();
    const members: string[] = [];
    const projectMemberIds: { projectId: string; userId: string }[] = [];
    for (const { value: m } of orgMembers) {
      try {
        checkRoles(m.roles, ORG_ROLES);
        orgs.stageMember(`org:${org.orgId}`, m.userId, m.roles, batch);
        members.push(m.userId);
      } catch (error) {
        this.report.failure('org_member', `${org.orgId}_${m.userId}`, error);
      }
    }
    for (const { value: m } of projectMembers) {
      try {
        this.outsideManagementProject(m.projectId);
        orgs.requireProject(m.projectId, org.orgId);
        checkRoles(m.roles, PROJECT_ROLES);
        orgs.stageMember(`project:${m.projectId}`, m.userId, m.roles, batch);
        projectMemberIds.push({ projectId: m.projectId, userId: m.userId });
      } catch (error) {
        this.report.failure('project_member', `${org.orgId}_${m.projectId}_${m.userId}`, error);
      }
    }
    await this.commitLater(org, batch, () => {
      for (const m of members) org.success.orgMembers.push(m);
      for (const m of projectMemberIds) org.success.projectMembers.push(m);
    });
  }

  private async commitLater(org: OrgImport, batch: Transaction, onSuccess: () => void): Promise<void> {
    const size = batch.size;
    try {
      await this.services.commit(batch);
      if (size > 0) this.writes++;
      onSuccess();
    } catch (error) {
      this.commitFailed('org', org.orgId, "the organization's grants or members", error);
    }
  }

  private commitFailed(type: string, id: string, what: string, error: unknown): void {
    log.error('import: commit failed', { type, id, error: error instanceof Error ? error.stack : String(error) });
    this.report.error(type, id, 'IMPORT-C0mm1', `writing ${what} failed, none of it was imported: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function requireProjectId(projectId: string | undefined): string {
  if (!projectId) throw invalidArgument('IMPORT-Pr0j1', 'app.projectId is required');
  return projectId;
}

/** A carried secret digest, only for auth methods that use a secret. */
function secretFor(digest: Buffer | undefined, authMethodType: string): Uint8Array | undefined {
  if (!digest) return undefined;
  return usesClientSecret(authMethodType) ? new Uint8Array(digest) : undefined;
}

function checkRoles(roles: readonly string[], allowed: readonly string[]): void {
  const unknown = roles.filter((r) => !allowed.includes(r));
  if (unknown.length > 0) throw invalidArgument('MEMBER-4m0sR', `unknown roles ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`);
}
