import type { EventDraft } from './activity.js';
import type { AppRecord, HumanData, IdentityProviders, MemberRecord, OrgRecord, PolicyRecord, ProjectRecord, UserGrantRecord, UserRecord } from './records.js';

/**
 * The events a change of one directory row stands for: the one rule, applied by the store inside the
 * transaction that writes the row (storage/directory-writes.ts, postgres/directory.ts), so whatever
 * path changed the row (an API, the login, an import, the CLI) the log says so in the same commit.
 * `before` is the row as stored before the commit (undefined: none), `after` as written (null:
 * removed). Event types are ZITADEL's where it has one. Payloads name what changed and carry only
 * values anyone who may read the log may see: never a hash, a secret, a key or a token.
 */
export function rowEvents(store: string, id: string, before: unknown, after: unknown): EventDraft[] {
  if (before === undefined && (after === null || after === undefined)) return [];
  const describe = DESCRIBE[store];
  return describe ? describe(id, before ?? undefined, after ?? undefined) : [];
}

// biome-ignore lint/suspicious/noExplicitAny: each store's rule reads its own row type; the table of rules holds them all.
type Describe = (id: string, before: any, after: any) => EventDraft[];

const INSTANCE = '';

/** `added`, `removed` or `changed`, for a row or a part of one. */
function lifecycle<T>(before: T | undefined, after: T | undefined): 'added' | 'removed' | 'changed' {
  return before === undefined ? 'added' : after === undefined ? 'removed' : 'changed';
}

/** The names of the fields whose values differ (shallow; arrays and objects compared by JSON). */
function changedFields(before: object | undefined, after: object | undefined, ignore: readonly string[] = []): string[] {
  const a = (before ?? {}) as Record<string, unknown>;
  const b = (after ?? {}) as Record<string, unknown>;
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].filter((name) => !ignore.includes(name) && !same(a[name], b[name])).sort();
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Bookkeeping every row has: not a change anyone made. */
const META = ['createdAt', 'changedAt', 'sequence'];

function userEvents(id: string, before: UserRecord | undefined, after: UserRecord | undefined): EventDraft[] {
  const user = (after ?? before)!;
  const at = (type: string, payload?: Record<string, unknown>, objectId?: string): EventDraft => ({
    type,
    aggregateType: 'user',
    aggregateId: id,
    resourceOwner: user.orgId,
    ...(objectId ? { objectId } : {}),
    ...(payload ? { payload } : {}),
  });
  if (!before) return [at(after!.human ? 'user.human.added' : 'user.machine.added', { userName: after!.userName })];
  if (!after) return [at('user.removed', { userName: before.userName })];
  const events: EventDraft[] = [];
  if (before.userName !== after.userName) events.push(at('user.username.changed', { userName: after.userName }));
  if (before.state !== after.state) events.push(at(stateEvent(before.state, after.state)));
  const revoked = (after.revokedBefore ?? 0) > (before.revokedBefore ?? 0);
  if (after.human && before.human) events.push(...humanEvents(before.human, after.human, at, revoked));
  if (after.machine && !same(before.machine, after.machine)) {
    events.push(at('user.machine.changed', { changed: changedFields(before.machine, after.machine) }));
  }
  const metadata = changedFields(before.metadata, after.metadata);
  for (const key of metadata) events.push(at(after.metadata?.[key] === undefined ? 'user.metadata.removed' : 'user.metadata.set', { key }));
  // Tokens voided on their own (a machine secret renewed, the tokens revoked); with a lock or a new password it is part of that.
  if (events.length === 0 && revoked) events.push(at('user.token.revoked'));
  return events;
}

function stateEvent(from: UserRecord['state'], to: UserRecord['state']): string {
  if (to === 'USER_STATE_LOCKED') return 'user.locked';
  if (from === 'USER_STATE_LOCKED') return to === 'USER_STATE_ACTIVE' ? 'user.unlocked' : 'user.deactivated';
  if (to === 'USER_STATE_INACTIVE') return 'user.deactivated';
  if (from === 'USER_STATE_INACTIVE') return 'user.reactivated';
  if (from === 'USER_STATE_INITIAL' && to === 'USER_STATE_ACTIVE') return 'user.human.initialization.check.succeeded';
  return 'user.state.changed';
}

function humanEvents(
  before: HumanData,
  after: HumanData,
  at: (type: string, payload?: Record<string, unknown>, objectId?: string) => EventDraft,
  /** The person's revocation horizon moved in this change. */
  revoked: boolean,
): EventDraft[] {
  const events: EventDraft[] = [];
  const profile = changedFields(before.profile, after.profile);
  if (profile.length > 0) events.push(at('user.human.profile.changed', { changed: profile }));
  if (before.email.email !== after.email.email) events.push(at('user.human.email.changed', { email: after.email.email }));
  if (!before.email.isEmailVerified && after.email.isEmailVerified) events.push(at('user.human.email.verified'));
  // The same address, no longer taken as verified (an administrator's UpdateHumanEmail): it signs nobody in now. Sesame's own type (ZITADEL has none).
  else if (before.email.email === after.email.email && before.email.isEmailVerified && !after.email.isEmailVerified) events.push(at('user.human.email.unverified'));
  if (before.phone?.phone !== after.phone?.phone) {
    events.push(after.phone ? at('user.human.phone.changed', { phone: after.phone.phone }) : at('user.human.phone.removed'));
  }
  if (after.phone?.isPhoneVerified && !before.phone?.isPhoneVerified) events.push(at('user.human.phone.verified'));
  else if (after.phone && before.phone?.phone === after.phone.phone && before.phone.isPhoneVerified && !after.phone.isPhoneVerified) events.push(at('user.human.phone.unverified'));
  if (before.passwordHash !== after.passwordHash) {
    // A new password voids what the old one began (the revocation horizon moves); the same password
    // hashed anew at a sign-in (a stronger algorithm) is ZITADEL's hash update, no change of it.
    const rehashed = before.passwordHash !== undefined && after.passwordHash !== undefined && !revoked;
    events.push(
      !after.passwordHash ? at('user.human.password.removed') : rehashed ? at('user.human.password.hash.updated') : at('user.human.password.changed', { changeRequired: after.passwordChangeRequired }),
    );
  } else if (before.passwordChangeRequired !== after.passwordChangeRequired && after.passwordChangeRequired) {
    events.push(at('user.human.password.change.required'));
  }
  if (after.failedPasswordAttempts > before.failedPasswordAttempts) {
    events.push(at('user.human.password.check.failed', { failedAttempts: after.failedPasswordAttempts }));
  }
  if ((after.failedOtpAttempts ?? 0) > (before.failedOtpAttempts ?? 0)) {
    events.push(at('user.human.mfa.otp.check.failed', { failedAttempts: after.failedOtpAttempts }));
  }
  if (!same(before.otpSecretSealed, after.otpSecretSealed)) {
    events.push(at(after.otpSecretSealed ? (before.otpSecretSealed ? 'user.human.mfa.otp.changed' : 'user.human.mfa.otp.added') : 'user.human.mfa.otp.removed'));
  }
  if (Boolean(before.otpEmail) !== Boolean(after.otpEmail)) events.push(at(after.otpEmail ? 'user.human.otp.email.added' : 'user.human.otp.email.removed'));
  if ((after.mfaInitSkippedAt ?? 0) > (before.mfaInitSkippedAt ?? 0)) events.push(at('user.human.mfa.init.skipped'));
  const tokens = (h: HumanData) => new Map((h.webauthn ?? []).map((t) => [t.tokenId, t]));
  const [oldTokens, newTokens] = [tokens(before), tokens(after)];
  for (const [tokenId, token] of newTokens) {
    if (oldTokens.has(tokenId)) continue;
    events.push(at(token.kind === 'passwordless' ? 'user.human.passwordless.token.added' : 'user.human.mfa.u2f.token.added', { name: token.name }, tokenId));
  }
  for (const [tokenId, token] of oldTokens) {
    if (newTokens.has(tokenId)) continue;
    events.push(at(token.kind === 'passwordless' ? 'user.human.passwordless.token.removed' : 'user.human.mfa.u2f.token.removed', { name: token.name }, tokenId));
  }
  const links = (h: HumanData) => new Map((h.idpLinks ?? []).map((l) => [`${l.idpId}\n${l.externalUserId}`, l]));
  const [oldLinks, newLinks] = [links(before), links(after)];
  for (const [key, link] of newLinks) if (!oldLinks.has(key)) events.push(at('user.human.externalidp.added', { idpId: link.idpId, userName: link.userName }, link.idpId));
  for (const [key, link] of oldLinks) if (!newLinks.has(key)) events.push(at('user.human.externalidp.removed', { idpId: link.idpId, userName: link.userName }, link.idpId));
  return events;
}

function orgEvents(id: string, before: OrgRecord | undefined, after: OrgRecord | undefined): EventDraft[] {
  const at = (type: string, payload?: Record<string, unknown>): EventDraft => ({ type, aggregateType: 'org', aggregateId: id, resourceOwner: id, ...(payload ? { payload } : {}) });
  if (!before) return [at('org.added', { name: after!.name })];
  if (!after) return [at('org.removed', { name: before.name })];
  const events: EventDraft[] = [];
  if (before.name !== after.name) events.push(at('org.changed', { name: after.name }));
  if (before.state !== after.state) events.push(at(after.state === 'ORG_STATE_INACTIVE' ? 'org.deactivated' : 'org.reactivated'));
  const domains = (o: OrgRecord) => new Map((o.domains ?? []).map((d) => [d.domainName, d]));
  const [was, is] = [domains(before), domains(after)];
  for (const [name, domain] of is) {
    const old = was.get(name);
    if (!old) events.push(at('org.domain.added', { domain: name }));
    if (domain.isVerified && !old?.isVerified) events.push(at('org.domain.verified', { domain: name }));
    if (domain.isPrimary && !old?.isPrimary) events.push(at('org.domain.primary.set', { domain: name }));
  }
  for (const name of was.keys()) if (!is.has(name)) events.push(at('org.domain.removed', { domain: name }));
  return events;
}

function projectEvents(id: string, before: ProjectRecord | undefined, after: ProjectRecord | undefined): EventDraft[] {
  const project = (after ?? before)!;
  const at = (type: string, payload?: Record<string, unknown>): EventDraft => ({
    type,
    aggregateType: 'project',
    aggregateId: id,
    resourceOwner: project.orgId,
    ...(payload ? { payload } : {}),
  });
  if (!before) return [at('project.added', { name: after!.name })];
  if (!after) return [at('project.removed', { name: before.name })];
  const events: EventDraft[] = [];
  const changed = changedFields(before, after, [...META, 'state', 'roles']);
  if (changed.length > 0) events.push(at('project.changed', { changed }));
  if (before.state !== after.state) events.push(at(after.state === 'PROJECT_STATE_INACTIVE' ? 'project.deactivated' : 'project.reactivated'));
  const roles = (p: ProjectRecord) => new Map((p.roles ?? []).map((r) => [r.key, r]));
  const [was, is] = [roles(before), roles(after)];
  for (const [key, role] of is) {
    const old = was.get(key);
    if (!old) events.push(at('project.role.added', { key }));
    else if (!same(old, role)) events.push(at('project.role.changed', { key }));
  }
  for (const key of was.keys()) if (!is.has(key)) events.push(at('project.role.removed', { key }));
  return events;
}

function appEvents(id: string, before: AppRecord | undefined, after: AppRecord | undefined): EventDraft[] {
  const app = (after ?? before)!;
  const at = (type: string, payload?: Record<string, unknown>): EventDraft => ({
    type,
    aggregateType: 'project',
    aggregateId: app.projectId,
    resourceOwner: app.orgId,
    objectId: id,
    payload: { appId: id, ...payload },
  });
  if (!before) return [at('project.application.added', { name: after!.name, clientId: after!.clientId, ...(after!.registration ? { registered: true } : {}) })];
  if (!after) return [at('project.application.removed', { name: before.name, clientId: before.clientId })];
  const events: EventDraft[] = [];
  if (before.state !== after.state) events.push(at(after.state === 'APP_STATE_INACTIVE' ? 'project.application.deactivated' : 'project.application.reactivated'));
  if (!same(before.secretHash, after.secretHash)) events.push(at('project.application.config.secret.changed'));
  const config = changedFields(before.oidc ?? before.api, after.oidc ?? after.api);
  if (config.length > 0) events.push(at(after.oidc ? 'project.application.config.oidc.changed' : 'project.application.config.api.changed', { changed: config }));
  const other = changedFields(before, after, [...META, 'state', 'secretHash', 'oidc', 'api', 'registration']);
  if (other.length > 0) events.push(at('project.application.changed', { changed: other }));
  return events;
}

/** Keys, secrets and PATs: added and removed (their material never in the log). */
function credentialEvents(kind: 'appKey' | 'machineKey' | 'machineSecret' | 'pat'): Describe {
  return (id, before, after) => {
    const row = (after ?? before) as { orgId?: string; userId?: string; projectId?: string; appId?: string; expirationDate?: number };
    const change = lifecycle(before, after);
    if (change === 'changed' && kind !== 'machineSecret') return [];
    const owner = row.orgId ?? '';
    switch (kind) {
      case 'appKey':
        return [{ type: `project.application.key.${change}`, aggregateType: 'project', aggregateId: row.projectId!, resourceOwner: owner, objectId: id, payload: { appId: row.appId, keyId: id } }];
      case 'machineKey':
        return [{ type: `user.machine.key.${change}`, aggregateType: 'user', aggregateId: row.userId!, resourceOwner: owner, objectId: id, payload: { keyId: id } }];
      case 'pat':
        return [{ type: `user.personal.access.token.${change}`, aggregateType: 'user', aggregateId: row.userId!, resourceOwner: owner, objectId: id, payload: { tokenId: id } }];
      case 'machineSecret':
        return [{ type: change === 'removed' ? 'user.machine.secret.removed' : 'user.machine.secret.set', aggregateType: 'user', aggregateId: row.userId!, resourceOwner: owner }];
    }
  };
}

function grantEvents(id: string, before: UserGrantRecord | undefined, after: UserGrantRecord | undefined): EventDraft[] {
  const grant = (after ?? before)!;
  const change = lifecycle(before, after);
  if (change === 'changed' && same(before!.roleKeys, after!.roleKeys)) return [];
  return [
    {
      type: `user.grant.${change}`,
      aggregateType: 'usergrant',
      aggregateId: id,
      resourceOwner: grant.orgId,
      payload: { userId: grant.userId, projectId: grant.projectId, ...(grant.projectGrantId ? { projectGrantId: grant.projectGrantId } : {}), roleKeys: grant.roleKeys },
    },
  ];
}

function memberEvents(_id: string, before: MemberRecord | undefined, after: MemberRecord | undefined): EventDraft[] {
  const member = (after ?? before)!;
  const change = lifecycle(before, after);
  if (change === 'changed' && same(before!.roles, after!.roles)) return [];
  const [scope, scopeId = INSTANCE] = member.scope.split(':') as [string, string?];
  const aggregateType = scope === 'org' ? 'org' : scope === 'project' ? 'project' : 'instance';
  return [
    {
      type: `${aggregateType}.member.${change}`,
      aggregateType,
      aggregateId: scopeId,
      // A project's members belong to the project's org, which the membership does not name: the project stands for it.
      resourceOwner: aggregateType === 'org' ? scopeId : aggregateType === 'project' ? scopeId : INSTANCE,
      objectId: member.userId,
      payload: { userId: member.userId, roles: member.roles },
    },
  ];
}

/** ZITADEL's names of the policies. */
const POLICY_TYPES: Record<string, string> = {
  lockout: 'policy.lockout',
  login: 'policy.login',
  passwordComplexity: 'policy.password.complexity',
  privacy: 'policy.privacy',
  label: 'policy.label',
  labelPreview: 'policy.label.preview',
  domain: 'policy.domain',
  notification: 'policy.notification',
  messageTexts: 'customtext',
};

function policyEvents(_id: string, before: PolicyRecord | undefined, after: PolicyRecord | undefined): EventDraft[] {
  const record = (after ?? before)!;
  const owner = record.orgId === INSTANCE ? 'instance' : 'org';
  const at = (type: string, payload?: Record<string, unknown>, objectId?: string): EventDraft => ({
    type: `${owner}.${type}`,
    aggregateType: owner,
    aggregateId: record.orgId,
    resourceOwner: record.orgId,
    ...(objectId ? { objectId } : {}),
    ...(payload ? { payload } : {}),
  });
  if (record.kind === 'idps') return idpEvents(before?.policy as IdentityProviders | undefined, after?.policy as IdentityProviders | undefined, at);
  const change = lifecycle(before, after);
  // The policy's fields that changed; message texts name the message types and languages only.
  const changed = change === 'changed' ? changedFields(before!.policy as object, after!.policy as object) : undefined;
  if (changed && changed.length === 0) return [];
  return [at(`${POLICY_TYPES[record.kind] ?? `policy.${record.kind}`}.${change}`, changed ? { changed } : undefined)];
}

function idpEvents(before: IdentityProviders | undefined, after: IdentityProviders | undefined, at: (type: string, payload?: Record<string, unknown>, objectId?: string) => EventDraft): EventDraft[] {
  const providers = (p: IdentityProviders | undefined) => new Map((p?.providers ?? []).map((idp) => [idp.id, idp]));
  const [was, is] = [providers(before), providers(after)];
  const events: EventDraft[] = [];
  for (const [id, idp] of is) {
    const old = was.get(id);
    if (!old) events.push(at('idp.added', { idpId: id, name: idp.name, kind: idp.kind }, id));
    else if (!same(old, idp)) {
      events.push(at('idp.changed', { idpId: id, name: idp.name, kind: idp.kind }, id));
    }
  }
  for (const [id, idp] of was) if (!is.has(id)) events.push(at('idp.removed', { idpId: id, name: idp.name, kind: idp.kind }, id));
  return events;
}

function signingKeyEvents(id: string, before: unknown, after: unknown): EventDraft[] {
  const row = (after ?? before) as { alg?: string; status?: string };
  const change = lifecycle(before, after);
  if (change === 'changed' && (before as { status?: string }).status === row.status) return [];
  return [{ type: `key_pair.${change}`, aggregateType: 'key_pair', aggregateId: id, resourceOwner: INSTANCE, payload: { algorithm: row.alg, status: row.status } }];
}

/** The instance-wide records of the meta store that are settings someone changes (the rest is the store's own bookkeeping). */
const INSTANCE_SETTINGS: Record<string, string> = {
  instance: 'instance',
  features: 'instance.features',
  securityPolicy: 'instance.policy.security',
  dynamicRegistration: 'instance.dynamic_registration',
  smtpConfigs: 'instance.smtp.config',
};

function metaEvents(id: string, before: unknown, after: unknown): EventDraft[] {
  const type = INSTANCE_SETTINGS[id];
  if (!type) return [];
  const change = lifecycle(before, after);
  const changed = change === 'changed' && isObject(before) && isObject(after) ? changedFields(before, after, META) : undefined;
  if (changed && changed.length === 0) return [];
  return [{ type: `${type}.${change === 'added' ? 'set' : change}`, aggregateType: 'instance', aggregateId: INSTANCE, resourceOwner: INSTANCE, ...(changed ? { payload: { changed } } : {}) }];
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !(value instanceof Uint8Array);
}

const DESCRIBE: Record<string, Describe> = {
  users: userEvents,
  orgs: orgEvents,
  projects: projectEvents,
  apps: appEvents,
  appKeys: credentialEvents('appKey'),
  machineKeys: credentialEvents('machineKey'),
  machineSecrets: credentialEvents('machineSecret'),
  pats: credentialEvents('pat'),
  userGrants: grantEvents,
  members: memberEvents,
  policies: policyEvents,
  signingKeys: signingKeyEvents,
  meta: metaEvents,
};
