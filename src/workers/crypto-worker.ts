import type { KeyObject } from 'node:crypto';
import { importPkcs8, signJwsInput } from '../crypto/jws-signature.js';
import { SignatureCheck } from './signature-check.js';
import { hashPassword, verifyPassword } from './passwords.js';
import type { CryptoTask } from './tasks.js';

/** Piscina task handler: CPU-heavy crypto off the main thread. */
const keys = new Map<string, KeyObject>();
const signatures = new SignatureCheck();

function keyFor(kid: string, der: Uint8Array): KeyObject {
  let key = keys.get(kid);
  if (!key) {
    key = importPkcs8(der);
    keys.set(kid, key);
  }
  return key;
}

export default function run(task: CryptoTask): unknown {
  switch (task.op) {
    case 'signBatch': {
      const key = keyFor(task.kid, task.keyDer);
      const out = new Array<string>(task.inputs.length);
      for (let i = 0; i < task.inputs.length; i++) out[i] = signJwsInput(task.alg, key, task.inputs[i]!);
      return out;
    }
    case 'hashPassword':
      return hashPassword(task.password);
    case 'verifyPassword':
      return verifyPassword(task.password, task.encodedHash);
    case 'verifySignatures':
      return task.items.map((item) => signatures.check(item));
  }
}
