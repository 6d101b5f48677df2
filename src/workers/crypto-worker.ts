import type { KeyObject } from 'node:crypto';
import { importPkcs8, importSpki, signJwsInput, verifyJwsSignature } from '../crypto/jws-signature.js';
import { hashPassword, verifyPassword } from './passwords.js';
import type { CryptoTask } from './tasks.js';

/** Piscina task handler: CPU-heavy crypto off the main thread. */
const keys = new Map<string, KeyObject>();
/**
 * Public keys by key id, with the bytes they were imported from: a key id can come back with other
 * bytes (a machine key deleted and imported again under its old id), and a signature must then be
 * checked against the key as it is now, never the one it replaced.
 */
const publicKeys = new Map<string, { spkiDer: Uint8Array; key: KeyObject }>();

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
      return task.items.map((item) => {
        let known = publicKeys.get(item.keyId);
        if (!known || Buffer.compare(known.spkiDer, item.spkiDer) !== 0) {
          known = { spkiDer: item.spkiDer, key: importSpki(item.spkiDer) };
          publicKeys.set(item.keyId, known);
        }
        const key = known.key;
        return verifyJwsSignature(item.alg, key, item.signingInput, item.signature);
      });
  }
}
