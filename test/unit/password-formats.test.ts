import { execFileSync } from 'node:child_process';
import { pbkdf2Sync, randomBytes, scryptSync } from 'node:crypto';
import { hashSync as argon2Hash } from '@node-rs/argon2';
import { ARGON2 } from '../../src/workers/argon2-algorithms.js';
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { checkEncodedHash } from '../../src/domain/password-hashes.js';
import { encode64LittleEndian, ITOA64 } from '../../src/crypto/passwords/crypt64.js';
import { md5Crypt } from '../../src/crypto/passwords/md5-crypt.js';
import { shaCrypt } from '../../src/crypto/passwords/sha-crypt.js';
import { isCostly, MAX_VERIFY_MS, verifyCostMs } from '../../src/crypto/passwords/cost.js';
import { importProblem, parseEncodedHash } from '../../src/crypto/passwords/registry.js';
import { verifyEncodedHash } from '../../src/crypto/passwords/verify.js';
import { HOSTILE_HASHES } from '../helpers/hostile-hashes.js';
import { hashPassword, needsRehash, verifyPassword } from '../../src/workers/passwords.js';

/**
 * Every imported hash format against a known password: hashes made here with the matching
 * libraries (bcryptjs, @node-rs/argon2, node:crypto) and with OpenSSL's `passwd` for the crypt(3)
 * formats no library here writes, plus published test vectors.
 */
const PASSWORD = 'correct horse battery staple';
const ab64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '').replace(/\+/g, '.');
const raw64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
const openssl = (...args: string[]) =>
  execFileSync('openssl', ['passwd', ...args, PASSWORD])
    .toString()
    .trim();

/** libsodium's `$7$` string, built here independently of src/ (checked against the published vector below). */
function sodiumScrypt(password: string, ln: number, r: number, p: number, salt: string): string {
  const enc30 = (v: number) => {
    let out = '';
    for (let i = 0; i < 5; i++) out += ITOA64[(v >>> (6 * i)) & 0x3f];
    return out;
  };
  const key = scryptSync(password, Buffer.from(salt), 32, { N: 2 ** ln, r, p, maxmem: 256 * 1024 * 1024 });
  return `$7$${ITOA64[ln]}${enc30(r)}${enc30(p)}${salt}$${encode64LittleEndian(key)}`;
}

const salt = randomBytes(16);
const HASHES: Record<string, string> = {
  'bcrypt $2a$': bcrypt.hashSync(PASSWORD, 10).replace(/^\$2b\$/, '$2a$'),
  'bcrypt $2b$': bcrypt.hashSync(PASSWORD, 10),
  'bcrypt $2y$': bcrypt.hashSync(PASSWORD, 10).replace(/^\$2b\$/, '$2y$'),
  argon2id: argon2Hash(PASSWORD, { algorithm: ARGON2.Argon2id, memoryCost: 8192, timeCost: 2, parallelism: 1 }),
  argon2i: argon2Hash(PASSWORD, { algorithm: ARGON2.Argon2i, memoryCost: 8192, timeCost: 2, parallelism: 1 }),
  'scrypt (passlib)': `$scrypt$ln=14,r=8,p=1$${ab64(salt)}$${ab64(scryptSync(PASSWORD, salt, 32, { N: 16384, r: 8, p: 1 }))}`,
  'scrypt (passwap $7$ln=)': `$7$ln=14,r=8,p=1$${raw64(salt)}$${raw64(scryptSync(PASSWORD, salt, 32, { N: 16384, r: 8, p: 1 }))}`,
  'scrypt (libsodium $7$)': sodiumScrypt(PASSWORD, 14, 8, 1, 'SaltyChips0123'),
  'pbkdf2-sha256 (Keycloak)': `$pbkdf2-sha256$27500$${salt.toString('base64')}$${pbkdf2Sync(PASSWORD, salt, 27500, 64, 'sha256').toString('base64')}`,
  'pbkdf2-sha256 (passlib)': `$pbkdf2-sha256$29000$${ab64(salt)}$${ab64(pbkdf2Sync(PASSWORD, salt, 29000, 32, 'sha256'))}`,
  'pbkdf2-sha512 (passlib)': `$pbkdf2-sha512$25000$${ab64(salt)}$${ab64(pbkdf2Sync(PASSWORD, salt, 25000, 64, 'sha512'))}`,
  'pbkdf2 sha1 (passlib)': `$pbkdf2$29000$${ab64(salt)}$${ab64(pbkdf2Sync(PASSWORD, salt, 29000, 20, 'sha1'))}`,
  'sha256-crypt (openssl -5)': openssl('-5'),
  'sha512-crypt (openssl -6)': openssl('-6'),
  'sha512-crypt rounds': openssl('-6', '-salt', 'rounds=7000$somesalt'),
  'md5crypt (openssl -1)': openssl('-1'),
};

describe('imported password hash formats', () => {
  for (const [name, encoded] of Object.entries(HASHES)) {
    it(`${name}: accepted at import, verifies the right password only`, () => {
      expect(() => checkEncodedHash(encoded)).not.toThrow();
      expect(verifyEncodedHash(PASSWORD, encoded)).toBe('ok');
      expect(verifyEncodedHash(`${PASSWORD}!`, encoded)).toBe('mismatch');
      expect(verifyEncodedHash('', encoded)).toBe('mismatch');
    });
  }

  it('matches published test vectors', () => {
    // scrypt paper / libsodium: "pleaseletmein", salt "SodiumChloride", N=16384, r=8, p=1.
    expect(verifyEncodedHash('pleaseletmein', '$7$C6..../....SodiumChloride$kBGj9fHznVYFQMEn/qDCfrDevf9YDtcDdKvEqHJLV8D')).toBe('ok');
    expect(sodiumScrypt('pleaseletmein', 14, 8, 1, 'SodiumChloride')).toBe('$7$C6..../....SodiumChloride$kBGj9fHznVYFQMEn/qDCfrDevf9YDtcDdKvEqHJLV8D');
    // Drepper's SHA-crypt specification.
    expect(shaCrypt('Hello world!', { variant: '5', rounds: 10000, salt: 'saltstringsaltstring' })).toBe('$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA');
    expect(shaCrypt('Hello world!', { variant: '6', salt: 'saltstring' })).toBe('$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1');
    expect(shaCrypt('Hello world!', { variant: '6', rounds: 10000, salt: 'saltstringsaltstring' })).toBe(
      '$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.',
    );
    expect(md5Crypt(PASSWORD, 'saltsalt')).toBe(execFileSync('openssl', ['passwd', '-1', '-salt', 'saltsalt', PASSWORD]).toString().trim());
    expect(md5Crypt('', 'abc')).toBe(execFileSync('openssl', ['passwd', '-1', '-salt', 'abc', '']).toString().trim());
  });

  it('does not check passwords longer than 256 characters against SHA-crypt or md5crypt (their cost grows with length)', () => {
    const long = 'x'.repeat(257);
    for (const args of [
      ['-6', '-salt', 'saltsalt'],
      ['-1', '-salt', '12345678'],
    ]) {
      const encoded = execFileSync('openssl', ['passwd', ...args, long])
        .toString()
        .trim();
      expect(verifyEncodedHash(long, encoded), encoded).toBe('mismatch');
      const limit = 'x'.repeat(256);
      expect(
        verifyEncodedHash(
          limit,
          execFileSync('openssl', ['passwd', ...args, limit])
            .toString()
            .trim(),
        ),
      ).toBe('ok');
    }
  });

  it('handles long passwords, multibyte text and crypt salts of any length', () => {
    const long = 'ü'.repeat(100);
    for (const args of [
      ['-5', '-salt', 'x'],
      ['-6', '-salt', 'a-longer-salt-than-16-characters'],
      ['-1', '-salt', '12345678'],
    ]) {
      const encoded = execFileSync('openssl', ['passwd', ...args, long])
        .toString()
        .trim();
      expect(verifyEncodedHash(long, encoded), encoded).toBe('ok');
    }
  });

  it('the fixtures from zitadel-tools are accepted formats', () => {
    expect(parseEncodedHash('$2b$10$Z6hUTEEeoJXN5/AmSm/4.eZ75RYgFVriQM9LPhNEC7kbAbS/VAaJ2')).toEqual({ format: 'bcrypt', cost: 10 });
    const keycloak = '$pbkdf2-sha256$27500$RaXjs4RiUKgJGkX6kp277w==$ng6oDRung/pBLayd5ro7IU3mL/p86pg3WvQNQc+N1Eg=';
    expect(() => checkEncodedHash(keycloak)).not.toThrow();
    expect(verifyEncodedHash('not the password', keycloak)).toBe('mismatch');
  });

  it('reports unknown and malformed hashes as unsupported, never throws', () => {
    for (const bad of [
      '',
      'plain',
      '$unknown$abc',
      '$2b$10$short',
      '$argon2id$v=19$garbage',
      '$scrypt$ln=14,r=8,p=1$!!$!!',
      '$pbkdf2-sha256$1000$***$***',
      '$5$salt$tooshort',
      '$1$salt$tooshort',
      '$7$C6..../....x$short',
    ]) {
      expect(verifyEncodedHash(PASSWORD, bad), bad).toBe('unsupported');
      expect(() => checkEncodedHash(bad), bad).toThrow(/NotSupported|Invalid/);
    }
  });

  it('refuses costs outside ZITADEL bounds at import', () => {
    expect(() => checkEncodedHash(bcrypt.hashSync('x', 4))).toThrow(/cost/);
    expect(() => checkEncodedHash(`$pbkdf2-sha256$999$${ab64(salt)}$${ab64(salt)}`)).toThrow(/rounds/);
    expect(() => checkEncodedHash(`$scrypt$ln=21,r=8,p=1$${ab64(salt)}$${ab64(salt)}`)).toThrow(/scrypt/);
    expect(() => checkEncodedHash(`$scrypt$ln=20,r=16,p=1$${ab64(salt)}$${ab64(salt)}`)).toThrow(/memory/);
    expect(() => checkEncodedHash(`$6$rounds=999$salt$${'a'.repeat(86)}`)).toThrow(/rounds/);
  });
});

describe('verification cost limit', () => {
  for (const [name, [encoded, reason]] of Object.entries(HOSTILE_HASHES)) {
    it(`refuses ${name} at import with the reason, and never verifies it`, () => {
      expect(() => checkEncodedHash(encoded)).toThrow(reason);
      expect(() => checkEncodedHash(encoded)).toThrow(/Errors\.User\.Password\.Invalid/);
      // Refused from the parameters alone, before any hashing (which would take minutes and time
      // the test out): the same rule refuses it at import and at verification.
      expect(importProblem(encoded)).toBeDefined();
      expect(verifyEncodedHash(PASSWORD, encoded)).toBe('unsupported');
    });
  }

  const h86 = 'a'.repeat(86);
  it('accepts the costliest hashes of common exports (ZITADEL bcrypt 14, Keycloak pbkdf2-sha512 210000, passlib scrypt ln=16)', () => {
    for (const encoded of [
      `$2b$14$${'a'.repeat(53)}`,
      `$pbkdf2-sha512$210000$${ab64(salt)}$${ab64(randomBytes(64))}`,
      `$scrypt$ln=16,r=8,p=1$${ab64(salt)}$${ab64(salt)}`,
      `$6$rounds=656000$salt$${h86}`,
      `$argon2id$v=19$m=65536,t=3,p=4$${raw64(salt)}$${raw64(salt)}`,
    ]) {
      expect(() => checkEncodedHash(encoded), encoded).not.toThrow();
      expect(verifyCostMs(parseEncodedHash(encoded)!)).toBeLessThanOrEqual(MAX_VERIFY_MS);
    }
  });
});

describe('costly verifications', () => {
  it('are those that take long or much memory', () => {
    const costly = (encoded: string) => isCostly(parseEncodedHash(encoded)!);
    const raw = raw64(salt);
    expect(costly(`$argon2id$v=19$m=19456,t=2,p=1$${raw}$${raw}`)).toBe(false);
    // 512 MiB for ~0.2 s: quick, but one per thread would multiply the memory.
    expect(costly(`$argon2id$v=19$m=524288,t=1,p=1$${raw}$${raw}`)).toBe(true);
    expect(costly(`$scrypt$ln=17,r=8,p=1$${ab64(salt)}$${ab64(salt)}`)).toBe(true);
    expect(costly(`$2b$10$${'a'.repeat(53)}`)).toBe(false);
    expect(costly(`$2b$13$${'a'.repeat(53)}`)).toBe(true);
  });
});

describe('the worker task', () => {
  it('asks for a rehash after a match on anything but Sesame argon2id', () => {
    const own = hashPassword(PASSWORD);
    expect(verifyPassword(PASSWORD, own)).toEqual({ ok: true });
    expect(needsRehash(own)).toBe(false);
    expect(verifyPassword(PASSWORD, HASHES['bcrypt $2b$']!)).toEqual({ ok: true, needsRehash: true });
    expect(verifyPassword(PASSWORD, HASHES.argon2i!)).toEqual({ ok: true, needsRehash: true });
    expect(verifyPassword('wrong', HASHES['md5crypt (openssl -1)']!)).toEqual({ ok: false });
    expect(verifyPassword(PASSWORD, '$nope$')).toEqual({ ok: false, unsupported: true });
  });
});
