import { describe, expect, it } from 'vitest';
import { githubPrimaryEmail, identityOfClaims, microsoftTenantAllowed, MICROSOFT_CONSUMERS_TENANT } from '../../src/domain/external-identity.js';
import { settingsOf, ADD_SCHEMAS } from '../../src/zitadel/idps.js';
import { amrOf } from '../../src/model/auth-checks.js';
import type { IdentityProvider } from '../../src/model/records.js';

/**
 * What Sesame takes from a provider (pure rules): who the account is, which email counts as
 * verified, Microsoft's tenant-aware issuer, GitHub's verified primary address, the presets'
 * endpoints, and `amr` with a provider's sign-in.
 */
const provider = (change: Partial<IdentityProvider>): IdentityProvider => ({
  id: 'idp-1',
  name: 'p',
  kind: 'oidc',
  clientId: 'c',
  scopes: [],
  options: { isLinkingAllowed: false, isCreationAllowed: false, isAutoCreation: false, isAutoUpdate: false, autoLinking: 'AUTO_LINKING_OPTION_UNSPECIFIED' },
  createdAt: 0,
  changedAt: 0,
  sequence: 1,
  ...change,
});

describe('external identities', () => {
  it('an OIDC account: sub, names, and the email verified only when the provider says so', () => {
    const identity = identityOfClaims(provider({}), { sub: 'u-1', email: 'a@b.example', email_verified: true, given_name: 'Ann', family_name: 'Bee', preferred_username: 'ann', locale: 'de' });
    expect(identity).toMatchObject({ idpId: 'idp-1', externalUserId: 'u-1', userName: 'ann', email: 'a@b.example', emailVerified: true, firstName: 'Ann', lastName: 'Bee', preferredLanguage: 'de' });
    expect(identityOfClaims(provider({}), { sub: 'u-1', email: 'a@b.example' })!.emailVerified).toBe(false);
    expect(identityOfClaims(provider({}), { sub: 'u-1', email: 'a@b.example', email_verified: 'yes' })!.emailVerified).toBe(false);
    expect(identityOfClaims(provider({}), { email: 'a@b.example' })).toBeUndefined();
  });

  it("a legacy provider's mappings choose the claim of the user name and the display name", () => {
    const claims = { sub: 's', email: 'ann@corp.example', preferred_username: 'ann', name: 'Ann Bee' };
    expect(identityOfClaims(provider({ userNameClaim: 'email', displayNameClaim: 'preferred_username' }), claims)).toMatchObject({ userName: 'ann@corp.example', displayName: 'ann' });
    expect(identityOfClaims(provider({}), claims)).toMatchObject({ userName: 'ann', displayName: 'Ann Bee' });
  });

  it('names split from `name`, and the user name from what there is', () => {
    expect(identityOfClaims(provider({}), { sub: 's', name: 'Grace Brewster Hopper' })).toMatchObject({ firstName: 'Grace', lastName: 'Brewster Hopper', userName: 's' });
  });

  it('an OAuth account by its id attribute; GitHub numbers become strings', () => {
    const github = provider({ kind: 'github', idAttribute: 'id' });
    expect(identityOfClaims(github, { id: 12345, login: 'octocat', name: 'Mona Lisa', email: 'mona@github.example', email_verified: true })).toMatchObject({
      externalUserId: '12345',
      userName: 'octocat',
      emailVerified: true,
    });
    expect(identityOfClaims(provider({ kind: 'oauth', idAttribute: 'user_id' }), { user_id: 'x7', sub: 'ignored' })!.externalUserId).toBe('x7');
  });

  it("Microsoft's addresses are verified only with the provider's emailVerified option", () => {
    const claims = { sub: 's', email: 'a@contoso.example', email_verified: true };
    expect(identityOfClaims(provider({ kind: 'azure', emailVerified: false }), claims)!.emailVerified).toBe(false);
    expect(identityOfClaims(provider({ kind: 'azure', emailVerified: true }), { sub: 's', email: 'a@contoso.example' })!.emailVerified).toBe(true);
  });

  it("GitHub's primary address, verified or not", () => {
    expect(
      githubPrimaryEmail([
        { email: 'x@y', primary: false, verified: true },
        { email: 'p@y', primary: true, verified: true },
      ]),
    ).toEqual({ email: 'p@y', verified: true });
    expect(githubPrimaryEmail([{ email: 'p@y', primary: true, verified: false }])).toEqual({ email: 'p@y', verified: false });
    expect(githubPrimaryEmail({ message: 'Bad credentials' })).toBeUndefined();
  });

  it("Microsoft's tenants: any on common, no personal accounts on organizations, only them on consumers", () => {
    const tid = '72f988bf-86f1-41af-91ab-2d7cd011db47';
    // A fixed tenant: openid-client compares the issuer with Microsoft's discovery of that tenant.
    expect(microsoftTenantAllowed('contoso.onmicrosoft.com', tid)).toBe(true);
    expect(microsoftTenantAllowed('common', tid)).toBe(true);
    expect(microsoftTenantAllowed('common', MICROSOFT_CONSUMERS_TENANT)).toBe(true);
    expect(microsoftTenantAllowed('organizations', tid)).toBe(true);
    expect(microsoftTenantAllowed('organizations', MICROSOFT_CONSUMERS_TENANT)).toBe(false);
    expect(microsoftTenantAllowed('consumers', tid)).toBe(false);
    expect(microsoftTenantAllowed('consumers', MICROSOFT_CONSUMERS_TENANT)).toBe(true);
    expect(microsoftTenantAllowed('common', 'not-a-tenant')).toBe(false);
  });

  it('the presets fill in their endpoints', () => {
    const github = settingsOf('github', ADD_SCHEMAS.github.parse({ clientId: 'c', clientSecret: 's' }), false);
    expect(github).toMatchObject({
      name: 'GitHub',
      authorizationEndpoint: 'https://github.com/login/oauth/authorize',
      tokenEndpoint: 'https://github.com/login/oauth/access_token',
      userEndpoint: 'https://api.github.com/user',
      idAttribute: 'id',
    });
    expect(settingsOf('google', ADD_SCHEMAS.google.parse({ clientId: 'c', clientSecret: 's' }), false)).toMatchObject({
      issuer: 'https://accounts.google.com',
      usePkce: true,
      scopes: ['openid', 'profile', 'email'],
    });
    expect(settingsOf('gitlab', ADD_SCHEMAS.gitlab.parse({ clientId: 'c', clientSecret: 's' }), false)).toMatchObject({ issuer: 'https://gitlab.com' });
    expect(settingsOf('azure', ADD_SCHEMAS.azure.parse({ clientId: 'c', clientSecret: 's', tenant: { tenantId: 'Contoso.onmicrosoft.com' } }), false)).toMatchObject({
      issuer: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0',
      tenant: 'contoso.onmicrosoft.com',
    });
    expect(settingsOf('azure', ADD_SCHEMAS.azure.parse({ clientId: 'c', clientSecret: 's' }), false)).toMatchObject({ tenant: 'common' });
    // On the multi-tenant endpoints no address is verified by Microsoft's word (the nOAuth takeover).
    expect(() => settingsOf('azure', ADD_SCHEMAS.azure.parse({ clientId: 'c', clientSecret: 's', emailVerified: true }), false)).toThrow(/single tenant/);
    // An org administrator's provider is at a public address.
    expect(() => settingsOf('oidc', ADD_SCHEMAS.oidc.parse({ name: 'x', issuer: 'https://10.0.0.7', clientId: 'c', clientSecret: 's' }), false)).toThrow(/public address/);
    expect(() => settingsOf('oidc', ADD_SCHEMAS.oidc.parse({ name: 'x', issuer: 'http://127.0.0.1:8080', clientId: 'c', clientSecret: 's' }), false)).toThrow(/https/);
    expect(settingsOf('oidc', ADD_SCHEMAS.oidc.parse({ name: 'x', issuer: 'http://127.0.0.1:8080', clientId: 'c', clientSecret: 's' }), true)).toMatchObject({ internalAllowed: true });
  });

  it('amr: a provider sign-in counts as a factor without a value of its own', () => {
    expect(amrOf({ idpAt: 1 })).toEqual([]);
    expect(amrOf({ idpAt: 1, secondFactorAt: 2 })).toEqual(['otp', 'mfa']);
    expect(amrOf({ passwordAt: 1 })).toEqual(['pwd']);
    expect(amrOf({ passwordAt: 1, secondFactorAt: 2 })).toEqual(['pwd', 'otp', 'mfa']);
  });
});
