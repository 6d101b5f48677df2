import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/protocol/errors.js';
import { grantScopes, parseScope } from '../../src/protocol/scopes.js';

const ctx = {
  resolveProject: (id: string) => (id === 'zitadel' ? 'mgmt' : id === 'p1' ? 'p1' : undefined),
  subjectOrg: { id: 'o1', domains: ['acme.localhost'] },
};

describe('scopes', () => {
  it('parses space-delimited scopes and collapses duplicates', () => {
    expect(parseScope('a  b a')).toEqual(['a', 'b']);
    expect(parseScope(undefined)).toEqual([]);
  });
  it('rejects characters outside the scope-token grammar', () => {
    expect(() => parseScope('a"b')).toThrow(OAuthError);
    expect(() => parseScope('a\\b')).toThrow(OAuthError);
  });
  it('drops unknown scopes, keeps reserved ones, resolves audience projects', () => {
    const granted = grantScopes(['profile', 'made-up', 'urn:zitadel:iam:org:project:id:zitadel:aud', 'urn:zitadel:iam:org:project:id:p1:aud', 'urn:zitadel:iam:user:metadata'], ctx);
    expect(granted.scopes).toEqual(['profile', 'urn:zitadel:iam:org:project:id:zitadel:aud', 'urn:zitadel:iam:org:project:id:p1:aud', 'urn:zitadel:iam:user:metadata']);
    expect(granted.audience).toEqual(['mgmt', 'p1']);
  });
  it('rejects unknown audience projects and several org scopes', () => {
    expect(() => grantScopes(['urn:zitadel:iam:org:project:id:nope:aud'], ctx)).toThrow(/unknown project/);
    expect(() => grantScopes(['urn:zitadel:iam:org:id:o1', 'urn:zitadel:iam:org:id:o2'], ctx)).toThrow(/Only one organization/);
  });
  it("keeps an org scope only for the subject's org", () => {
    expect(grantScopes(['urn:zitadel:iam:org:id:o1'], ctx).scopes).toEqual(['urn:zitadel:iam:org:id:o1']);
    expect(grantScopes(['urn:zitadel:iam:org:id:o2'], ctx).scopes).toEqual([]);
    expect(grantScopes(['urn:zitadel:iam:org:domain:primary:acme.localhost'], ctx).scopes).toHaveLength(1);
  });
  it('drops scopes the grant does not allow', () => {
    expect(grantScopes(['openid', 'email'], ctx, new Set(['openid'])).scopes).toEqual(['email']);
  });
});
