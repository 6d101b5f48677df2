import { z } from 'zod';
import type { FoundProvider, ProviderSettings } from '../actors/identity-providers.js';
import type { IdpKind, IdpOptions } from '../model/records.js';
import { invalidArgument } from '../model/errors.js';
import { formatProtoDuration } from '../util/duration.js';
import { isLoopbackHost, isLoopbackHttp } from '../protocol/authorize/redirect-uri.js';
import { isInternalHost } from '../util/public-address.js';
import { MICROSOFT_MULTI_TENANT } from '../domain/external-identity.js';
import { viewDetails } from './details.js';
import { enumField, enumValue } from './enums.js';
import { duration, flag, text } from './validation.js';

/**
 * ZITADEL's IdP templates (`/admin/v1/idps/…` for the instance, `/management/v1/idps/…` for an
 * org): one request schema per provider type, what Sesame stores for it, and ZITADEL's `Provider`
 * JSON. The presets are OIDC or OAuth with ZITADEL's endpoints filled in. JWT, Apple and SAML
 * providers are refused (KINDS_REFUSED), as is AUTO_LINKING_OPTION_USERNAME: a person's account is
 * linked by a verified email or by their own choice after signing in, never by a name alone.
 */
export const AUTO_LINKING = ['AUTO_LINKING_OPTION_UNSPECIFIED', 'AUTO_LINKING_OPTION_USERNAME', 'AUTO_LINKING_OPTION_EMAIL'] as const;
export const AZURE_TENANT_TYPES = ['AZURE_AD_TENANT_TYPE_COMMON', 'AZURE_AD_TENANT_TYPE_ORGANISATIONS', 'AZURE_AD_TENANT_TYPE_CONSUMERS'] as const;
const AZURE_TENANT_OF: Record<(typeof AZURE_TENANT_TYPES)[number], string> = {
  AZURE_AD_TENANT_TYPE_COMMON: 'common',
  AZURE_AD_TENANT_TYPE_ORGANISATIONS: 'organizations',
  AZURE_AD_TENANT_TYPE_CONSUMERS: 'consumers',
};

/** The path segment of each kind, ZITADEL's (`POST …/idps/generic_oidc`, `PUT …/idps/generic_oidc/{id}`). */
export const KIND_PATHS: Record<IdpKind, string> = {
  oidc: 'generic_oidc',
  oauth: 'generic_oauth',
  github: 'github',
  githubEnterprise: 'github_es',
  gitlab: 'gitlab',
  gitlabSelfHosted: 'gitlab_self_hosted',
  google: 'google',
  azure: 'azure',
  ldap: 'ldap',
};

/** Provider types Sesame has no sign-in for: their paths answer 400 naming this. */
export const KINDS_REFUSED: Record<string, string> = {
  jwt: 'JWT identity providers (a token handed over by a proxy) are not supported by Sesame',
  apple: 'Sign in with Apple is not supported by Sesame (it needs a key-signed client secret); use a generic OIDC provider',
  saml: 'SAML identity providers are not supported by Sesame; use OIDC or LDAP',
};

const PROVIDER_TYPES: Record<IdpKind, string> = {
  oidc: 'PROVIDER_TYPE_OIDC',
  oauth: 'PROVIDER_TYPE_OAUTH',
  github: 'PROVIDER_TYPE_GITHUB',
  githubEnterprise: 'PROVIDER_TYPE_GITHUB_ES',
  gitlab: 'PROVIDER_TYPE_GITLAB',
  gitlabSelfHosted: 'PROVIDER_TYPE_GITLAB_SELF_HOSTED',
  google: 'PROVIDER_TYPE_GOOGLE',
  azure: 'PROVIDER_TYPE_AZURE_AD',
  ldap: 'PROVIDER_TYPE_LDAP',
};

const optionsSchema = z
  .object({
    isLinkingAllowed: flag(),
    isCreationAllowed: flag(),
    isAutoCreation: flag(),
    isAutoUpdate: flag(),
    autoLinking: enumField(AUTO_LINKING),
  })
  .default({ isLinkingAllowed: false, isCreationAllowed: false, isAutoCreation: false, isAutoUpdate: false, autoLinking: 'AUTO_LINKING_OPTION_UNSPECIFIED' });

/**
 * https, or (`trusted`: written by an instance administrator) http to this machine. Without trust
 * (an org administrator's provider) the host must not be internal either: such a provider is
 * reached at public addresses only (services/federation/public-fetch.ts).
 */
export function checkProviderUrl(field: string, value: string, trusted: boolean): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidArgument('IDP-url01', `${field} must be an absolute URL`);
  }
  if (url.protocol !== 'https:' && !(trusted && isLoopbackHttp(value))) {
    throw invalidArgument('IDP-url02', `${field} must be an https URL${trusted ? ' (http only for a provider on this machine)' : ''}`);
  }
  if (!trusted && isInternalHost(url.hostname)) throw invalidArgument('IDP-url04', `${field} must be at a public address (an organization's provider is reached at public addresses only)`);
  if (url.hash || url.username || url.password) throw invalidArgument('IDP-url03', `${field} must not carry a fragment or credentials`);
}

const name = () => z.string().trim().min(1, 'must not be empty').max(200);
const clientId = () => z.string().trim().min(1, 'must not be empty').max(200);
const url = () => z.string().trim().min(1, 'must not be empty').max(2000);
const scopes = () => z.array(z.string().trim().min(1).max(200)).max(20).default([]);
/** Add: the secret is required; update: empty keeps the stored one (ZITADEL's rule). */
const secret = (add: boolean) => (add ? z.string().min(1, 'must not be empty').max(2000) : z.string().max(2000).default(''));

const oidcFields = (add: boolean) => ({
  name: name(),
  issuer: url(),
  clientId: clientId(),
  clientSecret: secret(add),
  scopes: scopes(),
  providerOptions: optionsSchema,
  isIdTokenMapping: flag(),
  usePkce: flag(),
});
const oauthFields = (add: boolean) => ({
  name: name(),
  clientId: clientId(),
  clientSecret: secret(add),
  authorizationEndpoint: url(),
  tokenEndpoint: url(),
  userEndpoint: url(),
  scopes: scopes(),
  idAttribute: z.string().trim().min(1, 'must not be empty').max(200),
  providerOptions: optionsSchema,
  usePkce: flag(),
});
const presetFields = (add: boolean) => ({ name: text(200), clientId: clientId(), clientSecret: secret(add), scopes: scopes(), providerOptions: optionsSchema });
const ldapAttributes = z.object({
  idAttribute: z.string().trim().min(1, 'must not be empty').max(200),
  firstNameAttribute: text(200),
  lastNameAttribute: text(200),
  displayNameAttribute: text(200),
  nickNameAttribute: text(200),
  preferredUsernameAttribute: text(200),
  emailAttribute: text(200),
  emailVerifiedAttribute: text(200),
  phoneAttribute: text(200),
  phoneVerifiedAttribute: text(200),
  preferredLanguageAttribute: text(200),
  avatarUrlAttribute: text(200),
  profileAttribute: text(200),
});
const ldapFields = (add: boolean) => ({
  name: name(),
  servers: z.array(url()).min(1, 'at least one server').max(10),
  startTls: flag(),
  baseDn: z.string().trim().min(1, 'must not be empty').max(1000),
  bindDn: z.string().trim().min(1, 'must not be empty').max(1000),
  bindPassword: secret(add),
  userBase: z.string().trim().min(1, 'must not be empty').max(200),
  userObjectClasses: z.array(z.string().trim().min(1).max(200)).min(1, 'at least one object class').max(20),
  userFilters: z.array(z.string().trim().min(1).max(200)).min(1, 'at least one filter attribute').max(20),
  // Each operation's limit (a sign-in ends after twice it): refused outside what Sesame keeps, not changed silently.
  timeout: duration()
    .refine((ms) => ms >= 1_000 && ms <= 60_000, 'must be from 1s to 60s')
    .optional(),
  attributes: ldapAttributes,
  providerOptions: optionsSchema,
  rootCa: text(20000),
});

function schemas(add: boolean) {
  return {
    oidc: z.object(oidcFields(add)),
    oauth: z.object(oauthFields(add)),
    github: z.object(presetFields(add)),
    githubEnterprise: z.object({ ...presetFields(add), authorizationEndpoint: url(), tokenEndpoint: url(), userEndpoint: url() }),
    gitlab: z.object(presetFields(add)),
    gitlabSelfHosted: z.object({ ...presetFields(add), issuer: url() }),
    google: z.object(presetFields(add)),
    azure: z.object({
      ...presetFields(add),
      tenant: z.object({ tenantType: enumValue(AZURE_TENANT_TYPES).optional(), tenantId: z.string().trim().max(100).optional() }).default({}),
      emailVerified: flag(),
    }),
    ldap: z.object(ldapFields(add)),
  } satisfies Record<IdpKind, z.ZodType>;
}
export const ADD_SCHEMAS = schemas(true);
export const UPDATE_SCHEMAS = schemas(false);
export type ProviderInput<K extends IdpKind> = z.output<(typeof ADD_SCHEMAS)[K]> | z.output<(typeof UPDATE_SCHEMAS)[K]>;

/** The legacy AddOIDCIDP body (ZITADEL's `POST …/idps/oidc`, and a bundle's `oidcIdps[].idp`): a generic OIDC provider. */
const MAPPING_FIELDS = ['OIDC_MAPPING_FIELD_UNSPECIFIED', 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME', 'OIDC_MAPPING_FIELD_EMAIL'] as const;
const STYLING_TYPES = ['STYLING_TYPE_UNSPECIFIED', 'STYLING_TYPE_GOOGLE'] as const;

export const legacyOidcSchema = z.object({
  name: name(),
  stylingType: enumField(STYLING_TYPES),
  clientId: clientId(),
  clientSecret: z.string().max(2000).default(''),
  issuer: url(),
  scopes: scopes(),
  displayNameMapping: enumField(MAPPING_FIELDS),
  usernameMapping: enumField(MAPPING_FIELDS),
  autoRegister: flag(),
});

/**
 * A legacy OIDC IdP as a provider: `autoRegister` is ZITADEL's automatic creation; the mappings
 * choose the claim a new person's user name and display name come from. `unsupported`: what Sesame
 * leaves out (the API refuses it, an import reports it).
 */
export function legacyOidcSettings(input: z.output<typeof legacyOidcSchema>, trusted: boolean): { settings: ProviderSettings; unsupported: string[] } {
  checkProviderUrl('issuer', input.issuer, trusted);
  const claim = (field: (typeof MAPPING_FIELDS)[number]) => (field === 'OIDC_MAPPING_FIELD_EMAIL' ? 'email' : field === 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME' ? 'preferred_username' : undefined);
  const userNameClaim = claim(input.usernameMapping);
  const displayNameClaim = claim(input.displayNameMapping);
  const unsupported = input.stylingType === 'STYLING_TYPE_GOOGLE' ? ["stylingType: Sesame draws every provider's button alike (STYLING_TYPE_GOOGLE is not supported)"] : [];
  const settings: ProviderSettings = {
    ...(trusted ? { internalAllowed: true as const } : {}),
    ...(userNameClaim ? { userNameClaim } : {}),
    ...(displayNameClaim ? { displayNameClaim } : {}),
    name: input.name,
    kind: 'oidc',
    clientId: input.clientId,
    scopes: input.scopes.length > 0 ? input.scopes : ['openid', 'profile', 'email'],
    issuer: input.issuer,
    isIdTokenMapping: false,
    usePkce: false,
    options: { isLinkingAllowed: true, isCreationAllowed: true, isAutoCreation: input.autoRegister, isAutoUpdate: false, autoLinking: 'AUTO_LINKING_OPTION_UNSPECIFIED' },
  };
  return { settings, unsupported };
}

function optionsOf(input: z.output<typeof optionsSchema>): IdpOptions {
  if (input.autoLinking === 'AUTO_LINKING_OPTION_USERNAME') {
    throw invalidArgument(
      'IDP-aL1nk',
      'providerOptions.autoLinking AUTO_LINKING_OPTION_USERNAME is not supported: Sesame links an account by a verified email (AUTO_LINKING_OPTION_EMAIL) or by the person signing in to it',
    );
  }
  if (input.isAutoCreation && !input.isCreationAllowed) throw invalidArgument('IDP-aCr8t', 'providerOptions.isAutoCreation needs isCreationAllowed');
  return {
    isLinkingAllowed: input.isLinkingAllowed,
    isCreationAllowed: input.isCreationAllowed,
    isAutoCreation: input.isAutoCreation,
    isAutoUpdate: input.isAutoUpdate,
    autoLinking: input.autoLinking,
  };
}

const GITHUB = { authorizationEndpoint: 'https://github.com/login/oauth/authorize', tokenEndpoint: 'https://github.com/login/oauth/access_token', userEndpoint: 'https://api.github.com/user' };

/** What Sesame stores for a request of a kind; `trusted`: written by an instance administrator (may reach this machine and its network). */
export function settingsOf<K extends IdpKind>(kind: K, input: ProviderInput<K>, trusted: boolean): ProviderSettings {
  // biome-ignore lint/suspicious/noExplicitAny: one body per provider kind, read by the fields each kind has.
  const i = input as Record<string, any>;
  const base = {
    kind,
    name: i.name as string,
    clientId: (i.clientId as string | undefined) ?? '',
    scopes: (i.scopes as string[] | undefined) ?? [],
    options: optionsOf(i.providerOptions),
    ...(trusted ? { internalAllowed: true as const } : {}),
  };
  const urls = (...fields: string[]) => {
    for (const field of fields) checkProviderUrl(field, i[field] as string, trusted);
  };
  switch (kind) {
    case 'oidc':
      urls('issuer');
      return { ...base, issuer: i.issuer, isIdTokenMapping: i.isIdTokenMapping, usePkce: i.usePkce };
    case 'oauth':
      urls('authorizationEndpoint', 'tokenEndpoint', 'userEndpoint');
      return { ...base, authorizationEndpoint: i.authorizationEndpoint, tokenEndpoint: i.tokenEndpoint, userEndpoint: i.userEndpoint, idAttribute: i.idAttribute, usePkce: i.usePkce };
    case 'github':
      return { ...base, name: base.name || 'GitHub', ...GITHUB, idAttribute: 'id' };
    case 'githubEnterprise':
      urls('authorizationEndpoint', 'tokenEndpoint', 'userEndpoint');
      return { ...base, name: base.name || 'GitHub Enterprise', authorizationEndpoint: i.authorizationEndpoint, tokenEndpoint: i.tokenEndpoint, userEndpoint: i.userEndpoint, idAttribute: 'id' };
    case 'gitlab':
      return { ...base, name: base.name || 'GitLab', issuer: 'https://gitlab.com', usePkce: true, scopes: base.scopes.length ? base.scopes : ['openid', 'profile', 'email'] };
    case 'gitlabSelfHosted':
      urls('issuer');
      return { ...base, name: base.name || 'GitLab', issuer: i.issuer, usePkce: true, scopes: base.scopes.length ? base.scopes : ['openid', 'profile', 'email'] };
    case 'google':
      return { ...base, name: base.name || 'Google', issuer: 'https://accounts.google.com', usePkce: true, scopes: base.scopes.length ? base.scopes : ['openid', 'profile', 'email'] };
    case 'azure': {
      const tenant = i.tenant as { tenantType?: (typeof AZURE_TENANT_TYPES)[number]; tenantId?: string };
      if (tenant.tenantId && !/^[0-9a-fA-F-]{36}$|^[A-Za-z0-9.-]+$/.test(tenant.tenantId)) throw invalidArgument('IDP-t3n4t', 'tenant.tenantId must be a tenant id or domain');
      // ZITADEL's tenant is one of the two: both set would leave one of them ignored.
      if (tenant.tenantId && tenant.tenantType) throw invalidArgument('IDP-t3n4b', 'tenant takes tenantType or tenantId, not both');
      const tenantName = tenant.tenantId?.toLowerCase() || AZURE_TENANT_OF[tenant.tenantType ?? 'AZURE_AD_TENANT_TYPE_COMMON'];
      // Any tenant's administrator sets their users' addresses: on the multi-tenant endpoints an
      // address is nobody's proof (the "nOAuth" takeover), so it never counts as verified there.
      if (i.emailVerified && MICROSOFT_MULTI_TENANT.has(tenantName)) {
        throw invalidArgument('IDP-t3n4v', "emailVerified needs a single tenant (tenant.tenantId): on the multi-tenant endpoints any tenant sets its users' addresses");
      }
      return {
        ...base,
        name: base.name || 'Microsoft',
        issuer: `https://login.microsoftonline.com/${tenantName}/v2.0`,
        tenant: tenantName,
        emailVerified: i.emailVerified,
        usePkce: true,
        scopes: base.scopes.length ? base.scopes : ['openid', 'profile', 'email'],
      };
    }
    case 'ldap': {
      for (const server of i.servers as string[]) {
        if (!/^ldaps?:\/\/[^\s/]+\/?$/.test(server)) throw invalidArgument('IDP-ld4p1', `servers: "${server}" must be an ldap:// or ldaps:// URL`);
        // The people's passwords and the bind password go over it: TLS, except to this machine.
        const url = new URL(server);
        // An org's directory is reached at public addresses only (as its OIDC and OAuth providers are).
        if (!trusted && isInternalHost(url.hostname))
          throw invalidArgument('IDP-ld4p6', `servers: "${server}" must be at a public address (an organization's provider is reached at public addresses only)`);
        if (url.protocol === 'ldap:' && !i.startTls && !isLoopbackHost(url.hostname)) {
          throw invalidArgument('IDP-ld4p3', `servers: "${server}" needs TLS: use ldaps:// or startTls (passwords go over it)`);
        }
      }
      const attributes = Object.fromEntries(Object.entries(i.attributes as Record<string, string>).filter(([, v]) => v !== ''));
      if (i.rootCa) throw invalidArgument('IDP-ld4p2', 'rootCa is not supported: Sesame trusts the system CAs and SESAME_SMTP_TLS_CA_FILE is not used for LDAP; leave it empty');
      // Sesame binds as the entry the search found (ZITADEL's userBase "dn"), and has no avatar or profile URL to fill.
      if (i.userBase !== 'dn') throw invalidArgument('IDP-ld4p4', 'userBase must be "dn": Sesame binds as the entry the search finds');
      for (const field of ['avatarUrlAttribute', 'profileAttribute']) {
        if (attributes[field]) throw invalidArgument('IDP-ld4p5', `attributes.${field} is not supported: Sesame keeps no avatar or profile URL`);
      }
      return {
        ...base,
        clientId: '',
        scopes: [],
        ldap: {
          servers: i.servers,
          startTls: i.startTls,
          baseDn: i.baseDn,
          bindDn: i.bindDn,
          userBase: i.userBase,
          userObjectClasses: i.userObjectClasses,
          userFilters: i.userFilters,
          timeoutMs: (i.timeout as number | undefined) ?? 10_000,
          attributes,
        },
      };
    }
  }
  throw invalidArgument('IDP-k1nd0', `unknown provider type ${kind}`);
}

const AZURE_TENANT_TYPE_OF = Object.fromEntries(Object.entries(AZURE_TENANT_OF).map(([k, v]) => [v, k]));

/** ZITADEL's `Provider` JSON (templates API, and a bundle's Sesame list): secrets never. */
export function providerView({ provider: p, owner, ownerType }: FoundProvider) {
  const common = { clientId: p.clientId, scopes: p.scopes };
  const config: Record<string, unknown> = { options: { ...p.options, autoLinking: p.options.autoLinking === 'AUTO_LINKING_OPTION_UNSPECIFIED' ? undefined : p.options.autoLinking } };
  switch (p.kind) {
    case 'oidc':
      config.oidc = { issuer: p.issuer, ...common, isIdTokenMapping: p.isIdTokenMapping, usePkce: p.usePkce };
      break;
    case 'oauth':
      config.oauth = { ...common, authorizationEndpoint: p.authorizationEndpoint, tokenEndpoint: p.tokenEndpoint, userEndpoint: p.userEndpoint, idAttribute: p.idAttribute, usePkce: p.usePkce };
      break;
    case 'github':
      config.github = common;
      break;
    case 'githubEnterprise':
      config.githubEs = { ...common, authorizationEndpoint: p.authorizationEndpoint, tokenEndpoint: p.tokenEndpoint, userEndpoint: p.userEndpoint };
      break;
    case 'gitlab':
      config.gitlab = common;
      break;
    case 'gitlabSelfHosted':
      config.gitlabSelfHosted = { ...common, issuer: p.issuer };
      break;
    case 'google':
      config.google = common;
      break;
    case 'azure':
      config.azureAd = { ...common, tenant: AZURE_TENANT_TYPE_OF[p.tenant ?? ''] ? { tenantType: AZURE_TENANT_TYPE_OF[p.tenant!] } : { tenantId: p.tenant }, emailVerified: p.emailVerified };
      break;
    case 'ldap': {
      const l = p.ldap!;
      config.ldap = {
        servers: l.servers,
        startTls: l.startTls,
        baseDn: l.baseDn,
        bindDn: l.bindDn,
        userBase: l.userBase,
        userObjectClasses: l.userObjectClasses,
        userFilters: l.userFilters,
        timeout: formatProtoDuration(l.timeoutMs),
        attributes: l.attributes,
      };
      break;
    }
  }
  return { id: p.id, details: viewDetails(p, owner || undefined), state: 'IDP_STATE_ACTIVE', name: p.name, owner: ownerType, type: PROVIDER_TYPES[p.kind], config };
}

/** The request body a provider's view would be sent as (a Sesame bundle's providers, imported again through settingsOf). */
export function inputOfView(view: ReturnType<typeof providerView>): { kind: IdpKind; input: Record<string, unknown> } | undefined {
  // biome-ignore lint/suspicious/noExplicitAny: the view's config is one object per provider kind.
  const config = view.config as Record<string, any>;
  const providerOptions = config.options ?? {};
  const kind = (Object.keys(PROVIDER_TYPES) as IdpKind[]).find((k) => PROVIDER_TYPES[k] === view.type);
  if (!kind) return undefined;
  const key = {
    oidc: 'oidc',
    oauth: 'oauth',
    github: 'github',
    githubEnterprise: 'githubEs',
    gitlab: 'gitlab',
    gitlabSelfHosted: 'gitlabSelfHosted',
    google: 'google',
    azure: 'azureAd',
    ldap: 'ldap',
  }[kind];
  const body = (config[key] ?? {}) as Record<string, unknown>;
  return { kind, input: { name: view.name, ...body, providerOptions } };
}
