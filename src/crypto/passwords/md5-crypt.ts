import { createHash } from 'node:crypto';
import { encodePermuted } from './crypt64.js';

/** md5crypt (`$1$salt$hash`), Poul-Henning Kamp's FreeBSD algorithm, as glibc and OpenSSL implement it. */
const MAGIC = '$1$';
const GROUPS: [number, number, number][] = [
  [0, 6, 12],
  [1, 7, 13],
  [2, 8, 14],
  [3, 9, 15],
  [4, 10, 5],
];
const TAIL = [-1, -1, 11, 2] as const;

const PATTERN = /^\$1\$([^$]{0,8})\$([./0-9A-Za-z]{22})$/;

export function parseMd5Crypt(encoded: string): { salt: string; hash: string } | undefined {
  const m = PATTERN.exec(encoded);
  return m ? { salt: m[1]!, hash: m[2]! } : undefined;
}

const md5 = (...parts: Buffer[]) => {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest();
};

export function md5Crypt(password: string | Buffer, saltText: string): string {
  const pw = Buffer.from(password);
  const salt = Buffer.from(saltText.slice(0, 8), 'utf8');
  let final = md5(pw, salt, pw);
  const ctx = createHash('md5').update(pw).update(MAGIC).update(salt);
  for (let left = pw.length; left > 0; left -= 16) ctx.update(final.subarray(0, Math.min(left, 16)));
  const zero = Buffer.from([0]);
  const first = pw.subarray(0, 1);
  for (let n = pw.length; n > 0; n >>= 1) ctx.update(n & 1 ? zero : first);
  final = ctx.digest();
  for (let i = 0; i < 1000; i++) {
    const h = createHash('md5');
    h.update(i & 1 ? pw : final);
    if (i % 3 !== 0) h.update(salt);
    if (i % 7 !== 0) h.update(pw);
    h.update(i & 1 ? final : pw);
    final = h.digest();
  }
  return `${MAGIC}${saltText.slice(0, 8)}$${encodePermuted(final, GROUPS, TAIL)}`;
}
