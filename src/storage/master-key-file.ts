import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MasterKey } from '../crypto/master-key.js';
import { log } from '../util/log.js';

/** The master key given does not open this data dir (or none is given for a dir that needs one). */
export class MasterKeyMismatchError extends Error {}

/**
 * The configured key (SESAME_MASTERKEY), or the data dir's `masterkey` file, generated only for a
 * data dir that holds no data sealed with a key yet (`fresh`): a lost file must not be replaced by a
 * new key.
 */
export function loadMasterKey(dataDir: string, configured: string | undefined, fresh: boolean): MasterKey {
  if (configured) return MasterKey.fromSecret(configured);
  const path = join(dataDir, 'masterkey');
  if (!existsSync(path)) {
    if (!fresh)
      throw new MasterKeyMismatchError(`${path} is missing and SESAME_MASTERKEY is not set, but the data dir (or, with SESAME_DATABASE_URL, the database) holds data sealed with a master key`);
    writeFileSync(path, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    log.info('generated master key', { path });
  }
  const secret = readFileSync(path, 'utf8').trim();
  // An empty or cut-off file would be a guessable key (SESAME_MASTERKEY needs 32 characters too).
  if (secret.length < 32) throw new MasterKeyMismatchError(`${path} holds no master key (fewer than 32 characters)`);
  return MasterKey.fromSecret(secret);
}
