import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readClientMetadata } from '../../src/protocol/client-metadata.js';
import { importHumanSchema } from '../../src/zitadel/users.js';
import { pathSegment } from '../../src/zitadel/validation.js';

/**
 * Ids and keys a caller chooses become segments of URL paths (the management API's, the console's
 * forms). `.` and `..` are refused wherever one is chosen: browsers and HTTP clients resolve them,
 * percent-encoded too, and a request meant for the object would reach its parent (a metadata key
 * `..` aimed "remove" at the user).
 */
describe('caller-chosen path segments', () => {
  it('refuses "." and ".." and takes names that merely contain dots', () => {
    for (const bad of ['.', '..', ' .. ']) expect(pathSegment().safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    for (const good of ['...', 'a..b', '.hidden', 'v1.2']) expect(pathSegment().safeParse(good).success, good).toBe(true);
  });

  it('refuses an imported person whose user id is "..", and a registrant’s key named ".."', () => {
    const person = { userName: 'dots', profile: { firstName: 'D', lastName: 'Ots' }, email: { email: 'dots@example.com' } };
    expect(importHumanSchema.safeParse({ ...person, userId: '..' }).success).toBe(false);
    expect(importHumanSchema.safeParse({ ...person, userId: '1234' }).success).toBe(true);

    const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const metadata = (kid: string) => ({ redirect_uris: ['https://app.example.com/cb'], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...jwk, kid }] } });
    expect(() => readClientMetadata(metadata('..'))).toThrow(/kid must not be/);
    expect(readClientMetadata(metadata('key-1')).keys?.[0]?.kid).toBe('key-1');
  });
});
