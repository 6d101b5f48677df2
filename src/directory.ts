import { ClientsActor } from './actors/clients.js';
import { KeysActor, type KeyGenerator } from './actors/keys.js';
import { OrgsActor, type InstanceInfo } from './actors/orgs.js';
import type { Config, SigningAlg } from './config.js';
import type { MasterKey } from './crypto/master-key.js';
import { bootstrapInstance } from './services/bootstrap.js';
import type { DirectoryStorage } from './storage/db.js';
import { loadMasterKey, MasterKeyMismatchError } from './storage/master-key-file.js';

/**
 * What the server (src/app.ts) and the offline CLI (src/cli/offline.ts) both open on a data dir,
 * wired once: the master key, checked against the one the dir was created with, and the directory
 * (orgs and users, clients, signing keys, the instance bootstrapped on first use).
 */
export { MasterKeyMismatchError };

/** The configured or stored master key; throws MasterKeyMismatchError when it does not open this dir. */
export async function openMasterKey(storage: Pick<DirectoryStorage, 'meta'>, config: Pick<Config, 'dataDir' | 'masterKey'>): Promise<MasterKey> {
  const sealed = storage.meta.masterKeyCheck();
  const masterKey = loadMasterKey(config.dataDir, config.masterKey, sealed === undefined);
  if (!sealed) {
    await storage.meta.sealMasterKeyCheck(masterKey.encrypt(Buffer.from('sesame')));
    return masterKey;
  }
  try {
    masterKey.decrypt(sealed);
  } catch {
    throw new MasterKeyMismatchError('the master key does not match the one this data dir was created with');
  }
  return masterKey;
}

export interface Directory {
  orgs: OrgsActor;
  clients: ClientsActor;
  keys: KeysActor;
  instance: InstanceInfo;
  /** True when this call created the instance (a fresh data dir). */
  created: boolean;
}

/** The signing keys' actor, alike on every thread (each may rotate: the key set is a compare-and-set in the store). */
export function keysActorOf(storage: DirectoryStorage, masterKey: MasterKey, config: Config, signingAlg: SigningAlg, generateKey?: KeyGenerator): KeysActor {
  return new KeysActor(
    storage.directoryReader,
    storage.directoryWrites,
    masterKey,
    signingAlg,
    config.keyRotationInterval,
    Math.max(config.accessTokenLifetime, config.idTokenLifetime),
    storage.durableDirectory,
    generateKey,
  );
}

export async function openDirectory(
  storage: DirectoryStorage,
  masterKey: MasterKey,
  config: Config,
  options: { issuer: string; signingAlg: SigningAlg; generateKey?: KeyGenerator | undefined },
): Promise<Directory> {
  const orgs = new OrgsActor(storage, new URL(options.issuer).hostname);
  const created = orgs.instance() === undefined;
  const clients = new ClientsActor(storage);
  // A data dir from before the store held the directory's unique keys: they are taken now, once,
  // before anything is written (a fresh one takes them as its first records are written).
  if (!storage.meta.uniqueKeysBuilt()) {
    await storage.directoryWrites.buildKeys([...orgs.uniqueKeys(), ...clients.uniqueKeys()]);
    await storage.meta.setUniqueKeysBuilt();
  }
  const keys = keysActorOf(storage, masterKey, config, options.signingAlg, options.generateKey);
  await keys.start();
  try {
    const instance = await bootstrapInstance(orgs, config.dataDir);
    return { orgs, clients, keys, instance, created };
  } catch (error) {
    keys.stop();
    throw error;
  }
}
