import { randomBytes } from 'node:crypto';

/**
 * Hashes whose verification would stall a worker: inside ZITADEL's cost bounds, refused by Sesame's
 * verification cost limit (src/crypto/passwords/cost.ts), each with what the refusal must say. Well-formed
 * but arbitrary salt and hash text: they are refused from their parameters, before any hashing.
 */
const salt = randomBytes(16);
const ab64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '').replace(/\+/g, '.');
const raw64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
const h86 = 'a'.repeat(86);

export const HOSTILE_HASHES: Record<string, [encoded: string, reason: RegExp]> = {
  'sha512-crypt rounds=999999999': [`$6$rounds=999999999$salt$${h86}`, /sha512-crypt rounds=999999999 would take ~\d+ min to verify \(limit 1500 ms\); at most \d+ rounds accepted/],
  'sha256-crypt rounds=5000000': [`$5$rounds=5000000$salt$${'a'.repeat(43)}`, /sha256-crypt rounds=5000000 would take ~\d+\.\d s to verify/],
  'pbkdf2-sha256 10M rounds': [`$pbkdf2-sha256$10000000$${ab64(salt)}$${ab64(randomBytes(32))}`, /pbkdf2-sha256 rounds=10000000 \(32-byte hash\) would take ~\d+\.\d s to verify/],
  'pbkdf2-sha1 with a 512-byte output': [`$pbkdf2$1000000$${ab64(salt)}$${ab64(randomBytes(512))}`, /pbkdf2-sha1 rounds=1000000 \(512-byte hash\) would take/],
  'scrypt 1 GiB (ln=20 r=8)': [`$scrypt$ln=20,r=8,p=1$${ab64(salt)}$${ab64(salt)}`, /scrypt ln=20,r=8,p=1 would take ~\d+\.\d s to verify/],
  'scrypt p=16': [`$scrypt$ln=16,r=8,p=16$${ab64(salt)}$${ab64(salt)}`, /scrypt ln=16,r=8,p=16 would take/],
  'bcrypt cost 16': [`$2b$16$${'a'.repeat(53)}`, /bcrypt cost 16 would take ~\d+\.\d s to verify \(limit 1500 ms\); cost at most 14/],
  'bcrypt cost 15': [`$2b$15$${'a'.repeat(53)}`, /bcrypt cost 15 would take/],
  'argon2id m=512 MiB t=10': [`$argon2id$v=19$m=524288,t=10,p=1$${raw64(salt)}$${raw64(salt)}`, /argon2 m=524288,t=10 would take ~\d+\.\d s to verify/],
};
