import { describe, expect, it } from 'vitest';
import { urnClaims, type ClaimsDirectory } from '../../src/protocol/claims.js';
import type { UserRecord } from '../../src/model/records.js';

/** A token carries only the roles its project defines when it is issued (a grant may name one removed meanwhile). */
describe('role claims', () => {
  const user = { id: 'u1', orgId: 'o1' } as UserRecord;
  const dir = (roles: string[]): ClaimsDirectory => ({
    getOrg: () => ({ id: 'o1', name: 'Org' }),
    primaryDomainOf: () => 'org.localhost',
    getProject: (id) => ({ id, projectRoleAssertion: true, roles: roles.map((key) => ({ key })) }),
    grantsOf: () => [{ projectId: 'p1', orgId: 'o1', roleKeys: ['reader', 'removed'] }],
  });

  it('leaves out a granted role the project no longer defines', () => {
    const claims = urnClaims(dir(['reader']), user, ['openid'], 'p1', true);
    expect(claims['urn:zitadel:iam:org:project:roles']).toEqual({ reader: { o1: 'org.localhost' } });
    expect(urnClaims(dir([]), user, ['openid'], 'p1', true)['urn:zitadel:iam:org:project:roles']).toBeUndefined();
    expect(urnClaims(dir(['reader', 'removed']), user, ['openid'], 'p1', true)['urn:zitadel:iam:org:project:roles']).toEqual({
      reader: { o1: 'org.localhost' },
      removed: { o1: 'org.localhost' },
    });
  });
});
