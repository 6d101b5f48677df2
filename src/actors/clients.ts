import { actingFor, type ActsFor } from './acting-for.js';
import type { Editor } from '../model/activity.js';
import { directoryKey, keysOfApp } from './directory-keys.js';
import { decidedAgain, retakeAll } from './decided-again.js';
import type { UniqueKey } from '../storage/unique-keys.js';
import { createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { DirectoryStorage } from '../storage/db.js';
import type { WriteBatch } from '../storage/batch.js';
import { inIdOrder, Table } from '../storage/table.js';
import { alreadyExists, invalidArgument, notFound, QuotaReached, WriteConflict } from '../model/errors.js';
import type { AppKeyRecord, AppRecord, ClientRegistration, MachineKeyRecord, MachineSecretRecord, OidcAppConfig, ProjectRecord } from '../model/records.js';
import { FAR_FUTURE, usesClientSecret } from '../model/records.js';
import { newAlphanumericSecret, newId } from '../util/ids.js';
import { secretMatches, sha256 } from '../util/hash.js';
import { clock } from '../util/clock.js';
import { ownRow, type View } from '../util/readonly.js';
import type { DirectoryStore } from '../storage/directory-log.js';

/**
 * Owns everything a client authenticates with: OIDC and API apps (with hashed secrets), their
 * keys, and machine users' secrets and keys. Records live in memory, so authenticating a client on
 * the hot path is a map lookup, one SHA-256 and a constant-time compare.
 */
const generateRsaKeyPair = promisify(generateKeyPair);

export type SecretCheck = 'ok' | 'no-secret' | 'mismatch';

/** A registered public key, ready to verify assertions. */
export interface AssertionKey {
  id: string;
  expirationDate: number;
  publicKey: KeyObject;
  /** SPKI DER, what the worker pool imports (once per key id). */
  spkiDer: Uint8Array;
}

function stampNew<T>(row: T): T & { createdAt: number; changedAt: number; sequence: number } {
  const now = Date.now();
  return { ...row, createdAt: now, changedAt: now, sequence: 1 };
}

/** Parses a caller-supplied public key (PEM text, as ZITADEL accepts it) into SPKI PEM. */
function normalizePublicKeyPem(pem: string): string {
  try {
    const text = pem.replace('-----BEGIN RSA PUBLIC KEY-----', '-----BEGIN PUBLIC KEY-----').replace('-----END RSA PUBLIC KEY-----', '-----END PUBLIC KEY-----');
    let key;
    try {
      key = createPublicKey(text);
    } catch {
      key = createPublicKey(pem);
    }
    return key.export({ format: 'pem', type: 'spki' }).toString();
  } catch {
    throw invalidArgument('KEY-3jd8s', 'publicKey is not a PEM encoded public key');
  }
}

async function generateRsa2048(): Promise<{ privatePem: string; publicPem: string }> {
  const { privateKey, publicKey } = await generateRsaKeyPair('rsa', { modulusLength: 2048 });
  return {
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

export class ClientsActor implements ActsFor {
  /** Who this actor's changes are by (see by); Sesame itself on the actor as composed. */
  readonly editor: Editor | undefined = undefined;

  /** This actor acting for `editor`: its changes are `editor`'s in the activity log. */
  by(editor: Editor): this {
    return actingFor(this, editor);
  }

  private readonly apps: Table<AppRecord>;
  private readonly appKeys: Table<AppKeyRecord>;
  private readonly machineKeys: Table<MachineKeyRecord>;
  private readonly machineSecrets: Table<MachineSecretRecord>;
  private readonly appByClientId = new Map<string, string>();
  /** Browser origins registered on active OIDC apps, with how many apps register each (CORS). */
  private readonly registeredOrigins = new Map<string, number>();
  private readonly originsOfApp = new Map<string, readonly string[]>();
  /**
   * Parsed public keys (parsed once, not per assertion) by the record they were parsed from, never by id: app and machine keys are
   * separate tables (a registrant chooses its app keys' ids), so one id may name two keys, and a
   * replaced record is parsed anew.
   */
  private readonly parsedKeys = new WeakMap<View<AppKeyRecord> | View<MachineKeyRecord>, AssertionKey>();

  /** Registration places this thread's writes are taking now (see addApp). */
  private readonly placesTaking = new Set<string>();

  constructor(private readonly storage: DirectoryStorage) {
    this.apps = Table.ofDirectory(storage, 'apps');
    this.appKeys = Table.ofDirectory(storage, 'appKeys');
    this.machineKeys = Table.ofDirectory(storage, 'machineKeys');
    this.machineSecrets = Table.ofDirectory(storage, 'machineSecrets');
    for (const app of this.apps.values()) {
      this.appByClientId.set(app.clientId, app.id);
      this.indexOrigins(app);
    }
  }

  /**
   * True when `origin` is registered on some active OIDC app: the origin of one of its redirect
   * URIs or one of its additionalOrigins (ZITADEL's allowed origins). The token-based endpoints
   * answer CORS only for these.
   */
  originAllowed(origin: string): boolean {
    return this.registeredOrigins.has(origin);
  }

  private indexOrigins(app: View<AppRecord>): void {
    this.unindexOrigins(app.id);
    if (!app.oidc || app.state !== 'APP_STATE_ACTIVE') return;
    const origins = new Set<string>();
    for (const uri of [...app.oidc.redirectUris, ...app.oidc.additionalOrigins]) {
      // Dev-mode glob patterns and custom schemes name no browser origin.
      if (uri.includes('*') || !URL.canParse(uri)) continue;
      const origin = new URL(uri).origin;
      if (origin !== 'null') origins.add(origin);
    }
    this.originsOfApp.set(app.id, [...origins]);
    for (const origin of origins) this.registeredOrigins.set(origin, (this.registeredOrigins.get(origin) ?? 0) + 1);
  }

  private unindexOrigins(appId: string): void {
    for (const origin of this.originsOfApp.get(appId) ?? []) {
      const count = this.registeredOrigins.get(origin)! - 1;
      if (count > 0) this.registeredOrigins.set(origin, count);
      else this.registeredOrigins.delete(origin);
    }
    this.originsOfApp.delete(appId);
  }

  /**
   * Takes in a change another thread committed, named by the directory's change feed (an HTTP
   * acceptor thread's copy): the record is read again as committed and the client id and origin
   * lookups follow it. False for a store this actor does not hold.
   */
  takeChange(store: DirectoryStore, id: string): boolean {
    switch (store) {
      case 'apps': {
        const { before, after } = this.apps.refresh(id);
        if (before && this.appByClientId.get(before.clientId) === id) this.appByClientId.delete(before.clientId);
        if (after) {
          this.appByClientId.set(after.clientId, id);
          this.indexOrigins(after);
        } else this.unindexOrigins(id);
        return true;
      }
      case 'appKeys':
      case 'machineKeys':
      case 'machineSecrets':
        // No lookups beside the rows (parsed keys are kept by the row object: a new row is parsed anew).
        this[store].refresh(id);
        return true;
      default:
        return false;
    }
  }

  /** Every record read again as stored (a copy that fell too far behind the change feed to follow it, and cannot be loaded anew). */
  retakeAll(): void {
    retakeAll(this, { apps: this.apps, appKeys: this.appKeys, machineKeys: this.machineKeys, machineSecrets: this.machineSecrets });
  }

  // ---- apps ----

  /** The app; with `batch`, also one the batch stages. */
  getApp(id: string, batch?: WriteBatch): View<AppRecord> | undefined {
    return this.apps.get(id, batch);
  }

  requireApp(id: string, projectId: string): View<AppRecord> {
    const app = this.apps.get(id);
    if (!app || app.projectId !== projectId) throw notFound('APP-Jd8sa', `application ${id} not found`);
    return app;
  }

  appByClient(clientId: string): View<AppRecord> | undefined {
    const id = this.appByClientId.get(clientId);
    return id === undefined ? undefined : this.apps.get(id);
  }

  appsOfProject(projectId: string): View<AppRecord>[] {
    return [...this.apps.values()].filter((a) => a.projectId === projectId);
  }

  /** Apps of the project created by dynamic client registration (its quota counts them). */
  registeredAppsOfProject(projectId: string): number {
    let count = 0;
    for (const app of this.apps.values()) if (app.projectId === projectId && app.registration) count++;
    return count;
  }

  /**
   * Adds an app. A registered client (`registration`, RFC 7591) takes a place among the project's
   * `quota` in the store with it: QuotaReached when every place is held (on every thread at once,
   * no more than the quota pass).
   */
  addApp(
    project: View<ProjectRecord>,
    input: {
      id?: string;
      clientId?: string;
      name: string;
      oidc?: OidcAppConfig;
      api?: { authMethodType: string };
      registration?: ClientRegistration;
      logoutReceiverByInstance?: boolean;
    },
    quota?: number,
  ): Promise<{ app: View<AppRecord>; clientSecret?: string }> {
    if (!input.registration || quota === undefined) return this.writeNewApp(project, input);
    // A place another thread took meanwhile is a conflict: decided again, with the next free place.
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const held = await this.storage.directoryReader.keysHeldUnder(directoryKey.registrationSlots(project.id));
      // Places this thread is taking now are skipped too: its own registrations do not contend.
      const taken = (place: number) => held.has(directoryKey.registrationSlot(project.id, place)) || this.placesTaking.has(directoryKey.registrationSlot(project.id, place));
      let place = 0;
      while (place < quota && taken(place)) place++;
      if (place >= quota) throw new QuotaReached(quota);
      const key = directoryKey.registrationSlot(project.id, place);
      this.placesTaking.add(key);
      try {
        return await this.writeNewApp(project, input, key);
      } finally {
        this.placesTaking.delete(key);
      }
    });
  }

  private async writeNewApp(
    project: View<ProjectRecord>,
    input: Parameters<ClientsActor['addApp']>[1],
    /** The registration place the app takes with it (another app taking it first is a conflict: decided again). */
    place?: string,
  ): Promise<{ app: View<AppRecord>; clientSecret?: string }> {
    const method = input.oidc?.authMethodType ?? input.api?.authMethodType ?? '';
    const clientSecret = usesClientSecret(method) ? newAlphanumericSecret(64) : undefined;
    const app = this.newApp(project, { ...input, ...(clientSecret ? { secretHash: sha256(clientSecret) } : {}) });
    if (input.registration) app.registration = input.registration;
    this.appByClientId.set(app.clientId, app.id);
    this.indexOrigins(app);
    try {
      const placeTaken = place === undefined ? [] : [{ key: place, owner: app.id, taken: () => new WriteConflict(place) }];
      await this.apps.put(app, { keys: { take: [...this.keysTaken(app), ...placeTaken] }, by: this.editor });
    } catch (error) {
      // Not written: its client id and origins are not registered either.
      if (!this.apps.has(app.id)) {
        if (this.appByClientId.get(app.clientId) === app.id) this.appByClientId.delete(app.clientId);
        this.unindexOrigins(app.id);
      }
      throw error;
    }
    return clientSecret ? { app, clientSecret } : { app };
  }

  /**
   * An imported app: its id and client id are kept. Its secret is the digest the bundle carries
   * (Sesame's export with passwords), else it has none until one is generated.
   */
  stageApp(
    project: View<ProjectRecord>,
    input: { id: string; clientId?: string; name: string; oidc?: OidcAppConfig; api?: { authMethodType: string }; secretHash?: Uint8Array; logoutReceiverByInstance?: boolean },
    batch: WriteBatch,
  ): View<AppRecord> {
    const app = this.newApp(project, input, batch);
    // The client id is claimed at once (appByClient finds no app until the commit); its origins
    // are allowed once the app is committed.
    this.appByClientId.set(app.clientId, app.id);
    batch.onRollback(() => {
      if (this.appByClientId.get(app.clientId) === app.id) this.appByClientId.delete(app.clientId);
    });
    batch.onCommit(() => this.indexOrigins(app));
    for (const unique of this.keysTaken(app)) batch.takeKey(unique);
    this.apps.stage(app, batch);
    return app;
  }

  /** The unique keys a new app takes in the store: its client id, its name in the project. */
  private keysTaken(app: View<AppRecord>): UniqueKey[] {
    return [
      { key: directoryKey.clientId(app.clientId), owner: app.id, taken: () => alreadyExists('APP-8fk2D', `client id ${app.clientId} is taken`) },
      { key: directoryKey.appName(app.projectId, app.name), owner: app.id, taken: () => alreadyExists('APP-3kf9s', `an application named "${app.name}" already exists in this project`) },
    ];
  }

  /** The unique keys every app holds (to build them in the store once, for a data dir from before): registered clients take their project's places in order. */
  *uniqueKeys(): Iterable<{ key: string; owner: string }> {
    const places = new Map<string, number>();
    for (const app of inIdOrder(this.apps.values())) {
      yield* keysOfApp(app);
      if (!app.registration) continue;
      const place = places.get(app.projectId) ?? 0;
      places.set(app.projectId, place + 1);
      yield { key: directoryKey.registrationSlot(app.projectId, place), owner: app.id };
    }
  }

  private newApp(
    project: View<ProjectRecord>,
    input: { id?: string; clientId?: string; name: string; oidc?: OidcAppConfig; api?: { authMethodType: string }; secretHash?: Uint8Array; logoutReceiverByInstance?: boolean },
    batch?: WriteBatch,
  ): AppRecord {
    const name = input.name.trim();
    if (name.length === 0 || name.length > 200) throw invalidArgument('APP-1kd9s', 'app name must have 1-200 characters');
    const id = input.id ?? newId();
    const clientId = input.clientId ?? newId();
    if (this.apps.taken(id)) throw alreadyExists('APP-2k9fS', `application ${id} already exists`);
    if (this.appByClientId.has(clientId)) throw alreadyExists('APP-8fk2D', `client id ${clientId} is taken`);
    const siblings = batch ? [...this.apps.valuesIn(batch)].filter((a) => a.projectId === project.id) : this.appsOfProject(project.id);
    if (siblings.some((a) => a.name === name)) {
      throw alreadyExists('APP-3kf9s', `an application named "${name}" already exists in this project`);
    }
    if (clientId.length === 0 || clientId.length > 200) throw invalidArgument('APP-Cl1d1', 'client id must have 1-200 characters');
    return stampNew<AppRecord>({
      id,
      projectId: project.id,
      orgId: project.orgId,
      name,
      state: 'APP_STATE_ACTIVE',
      clientId,
      ...(input.secretHash ? { secretHash: input.secretHash } : {}),
      ...(input.oidc ? { oidc: input.oidc } : {}),
      ...(input.api ? { api: input.api } : {}),
      ...(input.logoutReceiverByInstance ? { logoutReceiverByInstance: true } : {}),
    } as AppRecord);
  }

  /**
   * UpdateOIDCAppConfig: the app's new OIDC configuration (its registered origins follow), and
   * whether the instance vouches for its back-channel logout URI now.
   */
  updateOidcConfig(appId: string, oidc: OidcAppConfig, logoutReceiverByInstance: boolean): Promise<View<AppRecord>> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const app = this.apps.get(appId);
      if (!app?.oidc) throw notFound('APP-Jd8sa', `application ${appId} not found`);
      return this.writeApp(app, { oidc, logoutReceiverByInstance: logoutReceiverByInstance || undefined });
    });
  }

  /**
   * A registered client's update (RFC 7592 §2.2): its OIDC configuration and registered metadata
   * together. The client sets its receiver itself, so the instance no longer vouches for it.
   */
  updateRegisteredApp(appId: string, oidc: OidcAppConfig, registration: ClientRegistration): Promise<View<AppRecord>> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const app = this.apps.get(appId);
      if (!app?.oidc || !app.registration) throw notFound('APP-Jd8sa', `application ${appId} not found`);
      return this.writeApp(app, { oidc, registration, logoutReceiverByInstance: undefined });
    });
  }

  /**
   * RemoveApp: the app and its keys. Its client id stops authenticating at once; resolves once
   * durable (if the write fails, the app is back).
   */
  removeApp(appId: string): Promise<View<AppRecord>> {
    return decidedAgain(this.storage.directoryReader, this, async () => {
      const app = this.apps.get(appId);
      if (!app) throw notFound('APP-Jd8sa', `application ${appId} not found`);
      const keys = [...this.appKeys.values()].filter((k) => k.appId === appId);
      if (this.appByClientId.get(app.clientId) === app.id) this.appByClientId.delete(app.clientId);
      this.unindexOrigins(app.id);
      try {
        const places = app.registration ? [{ prefix: directoryKey.registrationSlots(app.projectId), owner: app.id }] : [];
        await Promise.all([this.apps.remove(app.id, { keys: { free: keysOfApp(app), freeOwned: places }, by: this.editor }), ...keys.map((k) => this.appKeys.remove(k.id, { by: this.editor }))]);
      } catch (error) {
        const current = this.apps.get(app.id);
        if (current) {
          this.appByClientId.set(current.clientId, current.id);
          this.indexOrigins(current);
        }
        throw error;
      }
      return app;
    });
  }

  /** The keys of an app. */
  appKeysOf(appId: string): View<AppKeyRecord>[] {
    return inIdOrder([...this.appKeys.values()].filter((k) => k.appId === appId));
  }

  /** True when an app key id is taken (a registrant's `kid` becomes the id its assertions name). */
  appKeyIdTaken(id: string): boolean {
    return this.appKeys.taken(id);
  }

  /** A new client secret for the app: returned once, stored hashed; the old one stops working. */
  async regenerateSecret(appId: string): Promise<{ app: View<AppRecord>; clientSecret: string }> {
    const app = this.apps.get(appId);
    if (!app) throw notFound('APP-Jd8sa', `application ${appId} not found`);
    const clientSecret = newAlphanumericSecret(64);
    return { app: await this.writeApp(app, { secretHash: sha256(clientSecret) }), clientSecret };
  }

  private async writeApp(app: View<AppRecord>, change: Pick<Partial<AppRecord>, 'oidc' | 'secretHash' | 'registration' | 'logoutReceiverByInstance'>): Promise<View<AppRecord>> {
    const updated: AppRecord = { ...ownRow<AppRecord>(app), ...change, changedAt: Date.now(), sequence: app.sequence + 1 };
    // Taken back by a change that names it as undefined: not stored as a key without a value.
    if (!updated.logoutReceiverByInstance) delete updated.logoutReceiverByInstance;
    this.indexOrigins(updated);
    try {
      await this.apps.put(updated, { by: this.editor });
    } catch (error) {
      // The origins follow the app as it is now (the put was taken back, unless a newer write came).
      const current = this.apps.get(app.id);
      if (current) this.indexOrigins(current);
      throw error;
    }
    return updated;
  }

  /** Checks an app's client secret in constant time. */
  appSecretMatches(app: View<AppRecord>, secret: string): boolean {
    return app.secretHash !== undefined && secretMatches(secret, app.secretHash);
  }

  /** Apps and machine users' secrets at this moment, in id order, for an export (see OrgsActor.snapshot). */
  snapshot(): { apps: View<AppRecord>[]; machineSecrets: View<MachineSecretRecord>[] } {
    return { apps: inIdOrder(this.apps.values()), machineSecrets: inIdOrder(this.machineSecrets.values()) };
  }

  // ---- machine secrets ----

  hasMachineSecret(userId: string): boolean {
    return this.machineSecrets.has(userId);
  }

  /**
   * A new secret for a machine user, staged: committed with the user's revocation horizon
   * (OrgsActor.stageTokenRevocation) in one commit, so no copy of the directory, on any thread or
   * node, ever holds the new secret without the horizon (a token it minted then would be void once
   * the horizon arrived).
   */
  stageMachineSecretRenewal(userId: string, batch: WriteBatch): string {
    const clientSecret = newAlphanumericSecret(64);
    const prior = this.machineSecrets.get(userId, batch);
    const now = clock.now();
    this.machineSecrets.stage(
      {
        id: userId,
        userId,
        secretHash: sha256(clientSecret),
        createdAt: prior?.createdAt ?? now,
        changedAt: now,
        sequence: (prior?.sequence ?? 0) + 1,
      },
      batch,
    );
    return clientSecret;
  }

  /** An imported machine user's secret digest (Sesame's export with passwords); not overwritten. */
  stageMachineSecret(userId: string, secretHash: Uint8Array, batch: WriteBatch): void {
    if (this.machineSecrets.taken(userId)) throw alreadyExists('USER-S3cr1', `user ${userId} already has a secret`);
    this.machineSecrets.stage(stampNew({ id: userId, userId, secretHash }), batch);
  }

  /** The secret digest of a machine user (export with passwords). */
  machineSecretHash(userId: string): Uint8Array | undefined {
    return this.machineSecrets.get(userId)?.secretHash;
  }

  checkMachineSecret(userId: string, secret: string): SecretCheck {
    const record = this.machineSecrets.get(userId);
    if (!record) return 'no-secret';
    return secretMatches(secret, record.secretHash) ? 'ok' : 'mismatch';
  }

  /** A removed machine user's secret and keys go with it. Resolves once durable. */
  async removeMachineCredentials(userId: string): Promise<void> {
    const keys = [...this.machineKeys.values()].filter((k) => k.userId === userId);
    await Promise.all([this.machineSecrets.has(userId) ? this.machineSecrets.remove(userId, { by: this.editor }) : undefined, ...keys.map((k) => this.machineKeys.remove(k.id, { by: this.editor }))]);
  }

  // ---- keys ----

  /** The unexpired key `keyId` of app `appId`, for private_key_jwt. */
  appAssertionKey(appId: string, keyId: string, now = clock.now()): AssertionKey | undefined {
    const record = this.appKeys.get(keyId);
    if (!record || record.appId !== appId || record.expirationDate <= now) return undefined;
    return this.parsed(record);
  }

  /** The unexpired key `keyId` of machine user `userId`, for the JWT profile grant. */
  machineAssertionKey(userId: string, keyId: string, now = clock.now()): AssertionKey | undefined {
    const record = this.machineKeys.get(keyId);
    if (!record || record.userId !== userId || record.expirationDate <= now) return undefined;
    return this.parsed(record);
  }

  private parsed(record: View<AppKeyRecord> | View<MachineKeyRecord>): AssertionKey {
    let key = this.parsedKeys.get(record);
    if (!key) {
      const publicKey = createPublicKey(record.publicKeyPem);
      key = { id: record.id, expirationDate: record.expirationDate, publicKey, spkiDer: publicKey.export({ format: 'der', type: 'spki' }) };
      this.parsedKeys.set(record, key);
    }
    return key;
  }

  getAppKey(id: string): View<AppKeyRecord> | undefined {
    return this.appKeys.get(id);
  }

  getMachineKey(id: string): View<MachineKeyRecord> | undefined {
    return this.machineKeys.get(id);
  }

  private static checkExpiration(expirationDate: number | undefined): number {
    const when = expirationDate ?? FAR_FUTURE;
    if (when <= clock.now()) throw invalidArgument('KEY-8fj2S', 'expirationDate must be in the future');
    return when;
  }

  /** Registers an app key; generates an RSA 2048 pair (returned once) unless a public key is given. */
  async addAppKey(app: View<AppRecord>, input: { id?: string; expirationDate?: number; publicKeyPem?: string }): Promise<{ key: View<AppKeyRecord>; privateKeyPem?: string }> {
    const expirationDate = ClientsActor.checkExpiration(input.expirationDate);
    if (input.id !== undefined && this.appKeys.taken(input.id)) throw alreadyExists('KEY-2kd8f', `key ${input.id} already exists`);
    const generated = input.publicKeyPem ? undefined : await generateRsa2048();
    const key = appKeyRecord(app, input.id ?? newId(), expirationDate, generated?.publicPem ?? normalizePublicKeyPem(input.publicKeyPem!));
    await this.appKeys.put(key, { by: this.editor });
    return generated ? { key, privateKeyPem: generated.privatePem } : { key };
  }

  /** An imported public key of an app (`appKeys[]`): id and expiration kept. */
  stageAppKey(app: View<AppRecord>, input: { id: string; expirationDate?: number; publicKeyPem: string }, batch: WriteBatch): View<AppKeyRecord> {
    if (this.appKeys.taken(input.id)) throw alreadyExists('KEY-2kd8f', `key ${input.id} already exists`);
    const key = appKeyRecord(app, input.id, ClientsActor.checkExpiration(input.expirationDate), normalizePublicKeyPem(input.publicKeyPem));
    this.appKeys.stage(key, batch);
    return key;
  }

  /** Registers a machine key; generates an RSA 2048 pair (returned once) unless a public key is given. */
  async addMachineKey(user: { id: string; orgId: string }, input: { expirationDate?: number; publicKeyPem?: string }): Promise<{ key: View<MachineKeyRecord>; privateKeyPem?: string }> {
    const expirationDate = ClientsActor.checkExpiration(input.expirationDate);
    const generated = input.publicKeyPem ? undefined : await generateRsa2048();
    const key = machineKeyRecord(user, newId(), expirationDate, generated?.publicPem ?? normalizePublicKeyPem(input.publicKeyPem!));
    await this.machineKeys.put(key, { by: this.editor });
    return generated ? { key, privateKeyPem: generated.privatePem } : { key };
  }

  /** A machine user's keys (ListMachineKeys), expired ones included. */
  machineKeysOf(userId: string): View<MachineKeyRecord>[] {
    return inIdOrder([...this.machineKeys.values()].filter((k) => k.userId === userId));
  }

  /** A machine key's removal, staged (see services/machine-credentials.ts: with the user's revocation horizon). */
  stageMachineKeyRemoval(keyId: string, batch: WriteBatch): void {
    this.machineKeys.stageRemoval(keyId, batch);
  }

  /** RemoveAppKey: the app authenticates with the key no more (what it obtained was the users' and stays). */
  async removeAppKey(keyId: string): Promise<void> {
    await this.appKeys.remove(keyId, { by: this.editor });
  }

  /** An imported public key of a machine user (`machineKeys[]`): id and expiration kept. */
  stageMachineKey(user: { id: string; orgId: string }, input: { id: string; expirationDate?: number; publicKeyPem: string }, batch: WriteBatch): View<MachineKeyRecord> {
    if (this.machineKeys.taken(input.id)) throw alreadyExists('KEY-2kd8f', `key ${input.id} already exists`);
    const key = machineKeyRecord(user, input.id, ClientsActor.checkExpiration(input.expirationDate), normalizePublicKeyPem(input.publicKeyPem));
    this.machineKeys.stage(key, batch);
    return key;
  }
}

function appKeyRecord(app: View<AppRecord>, id: string, expirationDate: number, publicKeyPem: string): View<AppKeyRecord> {
  return stampNew({
    id,
    orgId: app.orgId,
    appId: app.id,
    projectId: app.projectId,
    clientId: app.clientId,
    type: 'KEY_TYPE_JSON' as const,
    expirationDate,
    publicKeyPem,
  });
}

function machineKeyRecord(user: { id: string; orgId: string }, id: string, expirationDate: number, publicKeyPem: string): View<MachineKeyRecord> {
  return stampNew({ id, orgId: user.orgId, userId: user.id, type: 'KEY_TYPE_JSON' as const, expirationDate, publicKeyPem });
}

/** The reads of apps and machine credentials: the flows' view (ClientsReader; see ORGS_READS). */
export const CLIENTS_READS = [
  'originAllowed',
  'getApp',
  'requireApp',
  'appByClient',
  'appsOfProject',
  'registeredAppsOfProject',
  'appKeysOf',
  'appKeyIdTaken',
  'appSecretMatches',
  'hasMachineSecret',
  'machineSecretHash',
  'checkMachineSecret',
  'appAssertionKey',
  'machineAssertionKey',
  'getAppKey',
  'getMachineKey',
  'machineKeysOf',
  'snapshot',
] as const satisfies readonly (keyof ClientsActor)[];
export type ClientsReader = Pick<ClientsActor, (typeof CLIENTS_READS)[number]>;
