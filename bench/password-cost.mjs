// Calibrates the constants of src/crypto/passwords/cost.ts: times each password hash primitive on this
// machine (best of a few runs, one thread). Run after `npm run build`: node bench/password-cost.mjs
import { pbkdf2Sync, scryptSync } from 'node:crypto';
import bcrypt from 'bcryptjs';
import { Algorithm, hashSync, verifySync } from '@node-rs/argon2';
import { md5Crypt } from '../dist/crypto/passwords/md5-crypt.js';
import { shaCrypt } from '../dist/crypto/passwords/sha-crypt.js';

const time = (f) => {
  const start = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - start) / 1e6;
};
const best = (f, runs = 3) => Math.min(...Array.from({ length: runs }, () => time(f)));
const pw = 'correct horse battery staple';

for (const variant of ['5', '6']) {
  const rounds = 200_000;
  const ms = best(() => shaCrypt(pw, { variant, rounds, salt: 'saltsalt' }));
  console.log(`sha${variant === '5' ? 256 : 512}-crypt: ${((ms / rounds) * 1000).toFixed(2)} µs/round`);
}
console.log(`md5crypt: ${best(() => md5Crypt(pw, 'saltsalt')).toFixed(2)} ms`);
for (const [digest, size] of [['sha1', 20], ['sha256', 32], ['sha512', 64]]) {
  const iterations = 200_000;
  const ms = best(() => pbkdf2Sync(pw, 'saltsaltsaltsalt', iterations, size, digest));
  console.log(`pbkdf2-${digest}: ${((ms / iterations) * 1e6).toFixed(0)} ns/iteration/block`);
}
for (const ln of [14, 16, 18]) {
  const ms = best(() => scryptSync(pw, 'salt', 32, { N: 2 ** ln, r: 8, p: 1, maxmem: 2 ** 30 }), 2);
  console.log(`scrypt ln=${ln} r=8 p=1: ${ms.toFixed(0)} ms, ${((ms / (2 ** ln * 8)) * 1e6).toFixed(0)} ns per N·r·p`);
}
for (const cost of [10, 12, 14]) {
  const encoded = bcrypt.hashSync(pw, 4).replace('$04$', `$${cost}$`);
  console.log(`bcryptjs cost ${cost}: ${best(() => bcrypt.compareSync(pw, encoded), 1).toFixed(0)} ms`);
}
for (const [m, t] of [[19_456, 2], [262_144, 3]]) {
  const encoded = hashSync(pw, { algorithm: Algorithm.Argon2id, memoryCost: m, timeCost: t, parallelism: 1 });
  const ms = best(() => verifySync(encoded, pw), 2);
  console.log(`argon2id m=${m} t=${t}: ${ms.toFixed(0)} ms, ${((ms / (m * t)) * 1e6).toFixed(0)} ns per KiB·pass`);
}
