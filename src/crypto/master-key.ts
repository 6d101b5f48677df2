import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * The master key seals secrets at rest (AES-256-GCM: private keys, TOTP secrets, refresh token
 * payloads) and derives purpose keys (CSRF). Where it comes from is src/storage/master-key-file.ts.
 */
export class MasterKey {
  private constructor(private readonly key: Buffer) {}

  static fromSecret(secret: string): MasterKey {
    return new MasterKey(createHash('sha256').update(secret, 'utf8').digest());
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
