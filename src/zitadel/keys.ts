import { z } from 'zod';
import type { PublicKeyRecord } from '../model/records.js';
import { viewDetails, rfc3339 } from './details.js';
import { enumField, KEY_TYPE } from './enums.js';
import { expirationDate } from './validation.js';
import { listQuerySchema } from './list-query.js';

/**
 * Public keys of apps and machine users (AddAppKey, AddMachineKey): the request schema, the read
 * view, and the key files (`keyDetails`, docs/compatibility.md §2.1) handed out once when Sesame generates the pair.
 */
const publicKeyPem = () =>
  z.string().transform((value, ctx) => {
    // protojson `bytes`: base64 of the PEM text. A raw PEM is accepted too.
    if (value.includes('-----BEGIN')) return value;
    const pem = Buffer.from(value.replace(/\s+/g, ''), 'base64').toString('utf8');
    if (!pem.includes('-----BEGIN')) {
      ctx.addIssue({ code: 'custom', message: 'must be the base64 encoding of a PEM public key' });
      return z.NEVER;
    }
    return pem;
  });

export const addKeySchema = z.object({
  type: enumField(KEY_TYPE).refine((t) => t !== 'KEY_TYPE_UNSPECIFIED', 'must be KEY_TYPE_JSON'),
  expirationDate: expirationDate().optional(),
  publicKey: publicKeyPem().optional(),
});

export function keyView(key: PublicKeyRecord) {
  return { id: key.id, details: viewDetails(key, key.orgId), type: key.type, expirationDate: rfc3339(key.expirationDate) };
}

const base64Json = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64');

export function appKeyFile(key: { id: string; appId: string; clientId: string }, privateKeyPem: string): string {
  return base64Json({ type: 'application', keyId: key.id, key: privateKeyPem, appId: key.appId, clientId: key.clientId });
}

export function machineKeyFile(key: { id: string; userId: string; expirationDate: number }, privateKeyPem: string): string {
  return base64Json({
    type: 'serviceaccount',
    keyId: key.id,
    key: privateKeyPem,
    expirationDate: rfc3339(key.expirationDate),
    userId: key.userId,
  });
}

/** ListMachineKeys' and ListAppKeys' body: paging only (the keys in id order). */
export const listKeysSchema = z.object({ query: listQuerySchema }).strict();
