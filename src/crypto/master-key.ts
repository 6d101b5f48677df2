import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { log } from '../util/log.js';

/**
 * The master key encrypts private key material at rest (AES-256-GCM). It comes from
 * SESAME_MASTERKEY or, when absent, from `<data dir>/masterkey`, generated on first start.
 */
/** The master key given does not open this data dir (or none is given for a dir that needs one). */
export class MasterKeyMismatchError extends Error {}

export class MasterKey {
  private constructor(private readonly key: Buffer) {}

  static fromSecret(secret: string): MasterKey {
    return new MasterKey(createHash('sha256').update(secret, 'utf8').digest());
  }

  /**
   * The configured key, or the data dir's `masterkey` file, generated only for a data dir that holds
   * no data sealed with a key yet (`fresh`): a lost file must not be replaced by a new key.
   */
  static loadOrCreate(dataDir: string, configured: string | undefined, fresh: boolean): MasterKey {
    if (configured) return MasterKey.fromSecret(configured);
    const path = join(dataDir, 'masterkey');
    if (!existsSync(path)) {
      if (!fresh) throw new MasterKeyMismatchError(`${path} is missing and SESAME_MASTERKEY is not set, but the data dir holds data sealed with a master key`);
      writeFileSync(path, randomBytes(32).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
      log.info('generated master key', { path });
    }
    return MasterKey.fromSecret(readFileSync(path, 'utf8').trim());
  }

  /** A 256-bit key for one purpose (e.g. CSRF tokens), derived so it never equals the master key. */
  deriveKey(purpose: string): Buffer {
    return createHmac('sha256', this.key).update(`sesame:${purpose}`).digest();
  }

  /** iv(12) | tag(16) | ciphertext */
  encrypt(plain: Uint8Array): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  decrypt(sealed: Uint8Array): Buffer {
    const buf = Buffer.from(sealed);
    const decipher = createDecipheriv('aes-256-gcm', this.key, buf.subarray(0, 12));
    decipher.setAuthTag(buf.subarray(12, 28));
    return Buffer.concat([decipher.update(buf.subarray(28)), decipher.final()]);
  }
}
