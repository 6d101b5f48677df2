import type { MasterKey } from './master-key.js';
import { base32Decode } from './totp.js';

/** The canonical form of a base32 secret (upper case, no spaces or padding), or undefined when it is not base32. */
export function normalizeOtpSecret(code: string): string | undefined {
  const clean = code.replace(/[\s=]/g, '').toUpperCase();
  if (clean.length === 0 || clean.length > 256 || !base32Decode(clean)) return undefined;
  return clean;
}

/**
 * Seals a user's TOTP secret for rest (`HumanData.otpSecretSealed`): the base32 text, sealed with
 * the master key (openOtpSecret opens it). One implementation for every writer (ImportHumanUser's
 * `otpCode`, the migration import) and reader (the sign-in's code check, the export's `withOtp`).
 */
export function sealOtpSecret(masterKey: MasterKey, secret: string): Uint8Array {
  return new Uint8Array(masterKey.encrypt(Buffer.from(secret, 'utf8')));
}

export function openOtpSecret(masterKey: MasterKey, sealed: Uint8Array): string {
  return masterKey.decrypt(sealed).toString('utf8');
}
