import { z } from 'zod';
import { isLoopbackHttp } from '../protocol/authorize/redirect-uri.js';
import { invalidArgument } from '../model/errors.js';
import { appCredential, type AppRecord, type AppTokenLifetimes, type OidcAppConfig } from '../model/records.js';
import { formatProtoDuration } from '../util/duration.js';
import { isInternalHost } from '../util/public-address.js';
import { enumField, enumValue, nonZero, OIDC_APP_TYPE, OIDC_AUTH_METHOD_TYPE, OIDC_GRANT_TYPE, OIDC_RESPONSE_TYPE, OIDC_TOKEN_TYPE, OIDC_VERSION } from './enums.js';
import { checkOrigins, duration, flag, list, text } from './validation.js';
import type { View } from '../util/readonly.js';
import type { Config } from '../config.js';

/**
 * The OIDC configuration of an app as AddOIDCApp / UpdateOIDCAppConfig take it (docs/compatibility.md §2.3):
 * its schema, the consistency rules ZITADEL rejects on, the redirect URI rules Sesame enforces
 * up front, ZITADEL's compliance report, and the read view.
 */
const MAX_CLOCK_SKEW_MS = 5000;

/** A registered URI: bounded, since each is matched against every authorization request. */
const registeredUris = () => z.array(z.string().max(2048)).max(100).default([]);

export const oidcConfigFields = {
  redirectUris: registeredUris(),
  responseTypes: list(enumValue(OIDC_RESPONSE_TYPE)),
  grantTypes: list(enumValue(OIDC_GRANT_TYPE)),
  appType: enumField(OIDC_APP_TYPE),
  authMethodType: enumField(OIDC_AUTH_METHOD_TYPE),
  postLogoutRedirectUris: registeredUris(),
  version: enumField(OIDC_VERSION),
  devMode: flag(),
  accessTokenType: enumField(OIDC_TOKEN_TYPE),
  accessTokenRoleAssertion: flag(),
  idTokenRoleAssertion: flag(),
  idTokenUserinfoAssertion: flag(),
  clockSkew: duration().optional(),
  additionalOrigins: registeredUris(),
  skipNativeAppSuccessPage: flag(),
  backChannelLogoutUri: text(2000),
  // Sesame's own (ZITADEL has no PAR yet): RFC 9126 §6's client metadata, in the API's casing.
  requirePushedAuthorizationRequests: flag(),
  // Sesame's own: RFC 9449 §5.2's client metadata `dpop_bound_access_tokens`, in the API's casing.
  dpopBoundAccessTokens: flag(),
  // Sesame's own (ZITADEL has them per instance only): named like its instance OIDC settings.
  accessTokenLifetime: duration().optional(),
  idTokenLifetime: duration().optional(),
  refreshTokenIdleExpiration: duration().optional(),
  refreshTokenExpiration: duration().optional(),
  loginVersion: z
    .object({
      loginV1: z.object({}).optional(),
      loginV2: z.object({ baseUri: z.string().optional() }).optional(),
    })
    .optional(),
};

export const oidcConfigSchema = z.object(oidcConfigFields);
export type OidcConfigInput = z.output<typeof oidcConfigSchema>;

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

function parseUri(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

/** URI schemes a browser would run or read locally instead of navigating: never a redirect target, dev mode or not. */
const DANGEROUS_SCHEMES = new Set(['javascript', 'data', 'vbscript', 'file', 'about', 'blob', 'filesystem']);

/**
 * Redirect URIs must be absolute. Outside dev mode they must also be usable at the authorization
 * endpoint (zitadel/oidc's rules): https always; http only for code flow with a confidential
 * client, or a native app's loopback; custom schemes only for native apps. Dev mode allows glob
 * patterns, so only the scheme is checked there.
 */
function checkRedirectUris(field: string, uris: readonly string[], config: View<OidcAppConfig>, flowRules: boolean): void {
  const native = config.appType === 'OIDC_APP_TYPE_NATIVE';
  const codeFlow = config.grantTypes.includes('OIDC_GRANT_TYPE_AUTHORIZATION_CODE');
  const confidential = appCredential(config.authMethodType) !== 'public';
  for (const uri of uris) {
    if (config.devMode ? !SCHEME.test(uri) : parseUri(uri) === undefined) {
      throw invalidArgument('APP-Rdr1a', `${field}: "${uri}" is not an absolute URI`);
    }
    const scheme = uri.slice(0, uri.indexOf(':')).toLowerCase();
    if (DANGEROUS_SCHEMES.has(scheme)) throw invalidArgument('APP-Rdr4s', `${field}: the scheme ${scheme}: is not allowed for a redirect URI`);
    if (config.devMode) continue;
    // RFC 6749 §3.1.2: no fragment; and no credentials, which the browser would be handed.
    if (uri.includes('#')) throw invalidArgument('APP-Rdr5f', `${field}: "${uri}" must not have a fragment`);
    const url = parseUri(uri)!;
    if (url.username || url.password) throw invalidArgument('APP-Rdr6c', `${field}: "${uri}" must not carry credentials`);
    if (!flowRules) continue;
    if (scheme === 'https') continue;
    if (scheme === 'http') {
      if (native ? isLoopbackHttp(uri) : codeFlow && confidential) continue;
      throw invalidArgument('APP-Rdr2h', `${field}: "${uri}" uses http, which outside dev mode is allowed only for the code flow of a confidential client or a native app's loopback redirect`);
    }
    if (!native) throw invalidArgument('APP-Rdr3c', `${field}: "${uri}" uses a custom scheme, which only native apps may use (or enable devMode)`);
  }
}

/**
 * What is wrong with a back-channel logout URI (Back-Channel Logout 1.0 §2.2), if anything: it is
 * where Sesame POSTs logout tokens, so it must be an absolute http(s) URL without a fragment, and
 * https outside dev mode (as redirect URIs are held to https there, the app's cookies being at stake).
 * `publicOnly`: no instance role vouches for it (AppRecord.logoutReceiverByInstance), so it must
 * not name a host inside the network (a name is checked again at each delivery). Empty means none.
 */
export function backChannelLogoutUriProblem(uri: string, devMode: boolean, publicOnly = false): string | undefined {
  if (uri === '') return undefined;
  const url = parseUri(uri);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return `backChannelLogoutUri: "${uri}" is not an absolute http(s) URL`;
  if (uri.includes('#')) return `backChannelLogoutUri: "${uri}" must not have a fragment`;
  if (url.username || url.password) return `backChannelLogoutUri: "${uri}" must not carry credentials`;
  if (url.protocol === 'http:' && !devMode) return `backChannelLogoutUri: "${uri}" uses http, which is allowed only in dev mode`;
  if (publicOnly && isInternalHost(url.hostname)) {
    return `backChannelLogoutUri: ${url.hostname} is not a public host; only an administrator with an instance role may name a receiver inside the network`;
  }
  return undefined;
}

/**
 * Whether the instance vouches for an app's back-channel logout URI after a write of its OIDC
 * settings: a caller with an instance role vouches for what it sends; anyone else keeps an earlier
 * vouching only for the URI as it was (an org administrator may change the app's other settings).
 */
export function logoutReceiverVouched(byInstance: boolean, before: View<AppRecord> | undefined, uri: string): boolean {
  return byInstance || (before?.logoutReceiverByInstance === true && before.oidc?.backChannelLogoutUri === uri);
}

/** ZITADEL's OIDCApp.IsValid: each response type needs its grant type. */
function checkResponseGrantCombination(config: View<OidcAppConfig>): void {
  const needs = (grant: string) => {
    if (!config.grantTypes.includes(grant)) {
      throw invalidArgument('APP-Gr4nt', `grantTypes must include ${grant} for responseTypes ${config.responseTypes.join(', ')} (Errors.Project.App.Invalid)`);
    }
  };
  if (config.responseTypes.includes('OIDC_RESPONSE_TYPE_CODE')) needs('OIDC_GRANT_TYPE_AUTHORIZATION_CODE');
  if (config.responseTypes.some((r) => r !== 'OIDC_RESPONSE_TYPE_CODE')) needs('OIDC_GRANT_TYPE_IMPLICIT');
}

/**
 * Settings ZITADEL's API takes that Sesame cannot honour: a stored but ignored setting would be a
 * silent security gap, so the API refuses them and an import reports and drops them.
 */
export function unsupportedOidcSettings(input: OidcConfigInput): { field: string; message: string }[] {
  const found: { field: string; message: string }[] = [];
  if (input.loginVersion?.loginV2) {
    found.push({ field: 'loginVersion', message: 'loginVersion: loginV2 is not supported; Sesame serves its own login (loginV1)' });
  }
  return found;
}

/** The input without its unsupported settings (for an import, which reports them). */
export function withoutUnsupportedOidcSettings(input: OidcConfigInput): OidcConfigInput {
  const { loginVersion, ...rest } = input;
  return {
    ...rest,
    ...(loginVersion?.loginV1 ? { loginVersion: { loginV1: {} } } : {}),
  };
}

/**
 * The instance's token lifetimes (ms, from SESAME_*_LIFETIME): an app's own may be shorter, never
 * longer, since how long revocations and retired signing keys are kept follows the instance's.
 */
export type LifetimeLimits = Required<AppTokenLifetimes>;

/**
 * An app cannot be set to need a feature this server has turned off: requiring DPoP would refuse it
 * every token, requiring PAR every sign-in. (An import keeps such a setting, to be in force once the
 * feature is on; until then the app is refused.)
 */
export function refuseSettingsOfFeaturesOff(input: Pick<OidcConfigInput, 'dpopBoundAccessTokens' | 'requirePushedAuthorizationRequests'>, config: Pick<Config, 'featureDpop' | 'featurePar'>): void {
  if (input.dpopBoundAccessTokens && !config.featureDpop) {
    throw invalidArgument('APP-Dp0p1', 'dpopBoundAccessTokens: DPoP is turned off on this server (SESAME_FEATURE_DPOP=false)');
  }
  if (input.requirePushedAuthorizationRequests && !config.featurePar) {
    throw invalidArgument('APP-P4r01', 'requirePushedAuthorizationRequests: pushed authorization requests are turned off on this server (SESAME_FEATURE_PAR=false)');
  }
}

/** The instance's lifetimes, from its settings. */
export function instanceLifetimeLimits(config: Pick<Config, 'accessTokenLifetime' | 'idTokenLifetime' | 'refreshTokenIdleLifetime' | 'refreshTokenLifetime'>): LifetimeLimits {
  return { accessToken: config.accessTokenLifetime, idToken: config.idTokenLifetime, refreshTokenIdle: config.refreshTokenIdleLifetime, refreshToken: config.refreshTokenLifetime };
}

/** Per-app lifetime fields: the API's name, the stored key, the instance setting that bounds it. */
const LIFETIME_FIELDS = [
  ['accessTokenLifetime', 'accessToken', 'SESAME_ACCESS_TOKEN_LIFETIME'],
  ['idTokenLifetime', 'idToken', 'SESAME_ID_TOKEN_LIFETIME'],
  ['refreshTokenIdleExpiration', 'refreshTokenIdle', 'SESAME_REFRESH_TOKEN_IDLE_LIFETIME'],
  ['refreshTokenExpiration', 'refreshToken', 'SESAME_REFRESH_TOKEN_LIFETIME'],
] as const;

/** The API's names of an app's own token lifetimes. */
export const LIFETIME_FIELD_NAMES: readonly string[] = LIFETIME_FIELDS.map(([field]) => field);

/** The lifetimes an input sets beyond the instance's (refused by the API; reported and dropped by an import). */
export function lifetimesBeyondLimits(input: OidcConfigInput, limits: LifetimeLimits): { field: string; message: string }[] {
  const found: { field: string; message: string }[] = [];
  for (const [field, key, setting] of LIFETIME_FIELDS) {
    const ms = input[field];
    if (ms !== undefined && ms > limits[key]) {
      found.push({
        field,
        message: `${field} ${formatProtoDuration(ms)} is longer than the instance's (${formatProtoDuration(limits[key])}, ${setting}); an app's token lifetimes may only be shorter`,
      });
    }
  }
  return found;
}

/** The input without lifetimes beyond the instance's (for an import, which reports them). */
export function withinLifetimeLimits(input: OidcConfigInput, limits: LifetimeLimits): OidcConfigInput {
  const out = { ...input };
  for (const { field } of lifetimesBeyondLimits(input, limits)) delete out[field as (typeof LIFETIME_FIELDS)[number][0]];
  return out;
}

/**
 * Applies the defaults, validates, and returns the stored form. `publicLogoutReceiver`: the
 * back-channel logout URI must name a public host (see backChannelLogoutUriProblem).
 */
export function toOidcAppConfig(input: OidcConfigInput, limits: LifetimeLimits, publicLogoutReceiver = false): OidcAppConfig {
  const unsupported = unsupportedOidcSettings(input)[0];
  if (unsupported) throw invalidArgument('APP-Unsup1', unsupported.message);
  const badLogoutUri = backChannelLogoutUriProblem(input.backChannelLogoutUri, input.devMode, publicLogoutReceiver);
  if (badLogoutUri) throw invalidArgument('APP-Bcl01', badLogoutUri);
  const clockSkewMs = input.clockSkew ?? 0;
  if (clockSkewMs < 0 || clockSkewMs > MAX_CLOCK_SKEW_MS) throw invalidArgument('APP-Cl0ck', 'clockSkew must be between 0s and 5s');
  const config: OidcAppConfig = {
    redirectUris: input.redirectUris,
    responseTypes: input.responseTypes.length > 0 ? [...new Set(input.responseTypes)] : ['OIDC_RESPONSE_TYPE_CODE'],
    grantTypes: input.grantTypes.length > 0 ? [...new Set(input.grantTypes)] : ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
    appType: input.appType,
    authMethodType: input.authMethodType,
    postLogoutRedirectUris: input.postLogoutRedirectUris,
    version: input.version,
    devMode: input.devMode,
    accessTokenType: input.accessTokenType,
    accessTokenRoleAssertion: input.accessTokenRoleAssertion,
    idTokenRoleAssertion: input.idTokenRoleAssertion,
    idTokenUserinfoAssertion: input.idTokenUserinfoAssertion,
    clockSkewMs,
    additionalOrigins: input.additionalOrigins,
    skipNativeAppSuccessPage: input.skipNativeAppSuccessPage,
    backChannelLogoutUri: input.backChannelLogoutUri,
  };
  if (input.requirePushedAuthorizationRequests) config.requirePushedAuthorizationRequests = true;
  if (input.dpopBoundAccessTokens) {
    // The implicit flow hands its access token to the browser, where no proof can bind it.
    if (config.responseTypes.includes('OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN')) {
      throw invalidArgument('APP-Dp0p2', 'dpopBoundAccessTokens: the implicit flow (OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN) cannot bind its access tokens; remove that response type');
    }
    config.dpopBoundAccessTokens = true;
  }
  if (input.loginVersion?.loginV1) config.loginVersion = { loginV1: {} };
  const beyond = lifetimesBeyondLimits(input, limits)[0];
  if (beyond) throw invalidArgument('APP-L1fe1', beyond.message);
  const lifetimes: AppTokenLifetimes = {};
  for (const [field, key] of LIFETIME_FIELDS) {
    const ms = input[field];
    if (ms === undefined || ms === 0) continue; // 0s, like absent: the instance's
    if (ms < 1000) throw invalidArgument('APP-L1fe2', `${field} must be at least 1s (or 0s for the instance's)`);
    lifetimes[key] = ms;
  }
  if (Object.keys(lifetimes).length > 0) config.lifetimes = lifetimes;
  checkResponseGrantCombination(config);
  checkRedirectUris('redirectUris', config.redirectUris, config, true);
  checkRedirectUris('postLogoutRedirectUris', config.postLogoutRedirectUris, config, false);
  checkOrigins('additionalOrigins', config.additionalOrigins);
  return config;
}

const PROBLEM_MESSAGES: Record<string, string> = {
  'Application.OIDC.V1.NotCompliant': 'The configuration is not compliant with OIDC 1.0.',
  'Application.OIDC.V1.NoRedirectUris': 'At least one redirect URI must be registered.',
  'Application.OIDC.V1.GrantType.Refresh.NoAuthCode': 'Refresh token is only allowed in combination with authorization code.',
  'Application.OIDC.V1.Code.RedirectUris.CustomOnlyForNative': 'Custom redirect URIs are only allowed for native apps.',
  'Application.OIDC.V1.Code.RedirectUris.HttpOnlyForWeb': 'http redirect URIs are only allowed for web apps with code flow.',
  'Application.OIDC.V1.Implicit.RedirectUris.CustomNotAllowed': 'Custom redirect URIs are not allowed for the implicit flow.',
  'Application.OIDC.V1.Implicit.RedirectUris.HttpNotAllowed': 'http redirect URIs are not allowed for the implicit flow.',
  'Application.OIDC.V1.Native.RedirectUris.MustBeHttpLocalhost': 'Native apps may only use http redirect URIs on localhost.',
  'Application.OIDC.V1.Native.AuthMethodType.NotNone': 'Native apps should use auth method NONE.',
  'Application.OIDC.V1.UserAgent.AuthMethodType.NotNone': 'User agent apps should use auth method NONE.',
};

/** ZITADEL's OIDC 1.0 compliance report (domain.GetOIDCV1Compliance), returned on create. */
export function oidcCompliance(config: View<OidcAppConfig>): { noneCompliant: boolean; complianceProblems: { key: string; localizedMessage: string }[] } {
  const problems: string[] = [];
  const uris = config.redirectUris;
  const has = (grant: string) => config.grantTypes.includes(grant);
  const scheme = (uri: string) => uri.slice(0, Math.max(uri.indexOf(':'), 0)).toLowerCase();
  const allHttps = uris.every((u) => scheme(u) === 'https');
  const anyHttp = uris.some((u) => scheme(u) === 'http');
  const anyCustom = uris.some((u) => scheme(u) !== 'http' && scheme(u) !== 'https');
  const onlyLoopbackHttp = uris.every((u) => scheme(u) !== 'http' || isLoopbackHttp(u));
  const native = config.appType === 'OIDC_APP_TYPE_NATIVE';

  if (!has('OIDC_GRANT_TYPE_DEVICE_CODE') && has('OIDC_GRANT_TYPE_REFRESH_TOKEN') && !has('OIDC_GRANT_TYPE_AUTHORIZATION_CODE')) {
    problems.push('Application.OIDC.V1.GrantType.Refresh.NoAuthCode');
  }
  if (uris.length === 0) problems.unshift('Application.OIDC.V1.NoRedirectUris');
  if (!allHttps) {
    if (has('OIDC_GRANT_TYPE_IMPLICIT')) {
      if (anyCustom) problems.push('Application.OIDC.V1.Implicit.RedirectUris.CustomNotAllowed');
      if (anyHttp && !native) problems.push('Application.OIDC.V1.Implicit.RedirectUris.HttpNotAllowed');
    }
    if (has('OIDC_GRANT_TYPE_AUTHORIZATION_CODE')) {
      if (anyHttp && config.appType === 'OIDC_APP_TYPE_USER_AGENT') problems.push('Application.OIDC.V1.Code.RedirectUris.HttpOnlyForWeb');
      if (anyCustom && !native) problems.push('Application.OIDC.V1.Code.RedirectUris.CustomOnlyForNative');
    }
    if (anyHttp && native && !onlyLoopbackHttp) problems.push('Application.OIDC.V1.Native.RedirectUris.MustBeHttpLocalhost');
  }
  if (appCredential(config.authMethodType) !== 'public') {
    if (native) problems.push('Application.OIDC.V1.Native.AuthMethodType.NotNone');
    if (config.appType === 'OIDC_APP_TYPE_USER_AGENT') problems.push('Application.OIDC.V1.UserAgent.AuthMethodType.NotNone');
  }
  if (problems.length > 0) problems.unshift('Application.OIDC.V1.NotCompliant');
  const unique = [...new Set(problems)];
  return {
    noneCompliant: unique.length > 0,
    complianceProblems: unique.map((key) => ({ key, localizedMessage: PROBLEM_MESSAGES[key] ?? key })),
  };
}

/** The `oidcConfig` of GetAppByID; never carries the secret. */
export function oidcConfigView(app: View<AppRecord>, config: View<OidcAppConfig>) {
  const compliance = oidcCompliance(config);
  return {
    redirectUris: config.redirectUris,
    responseTypes: config.responseTypes,
    grantTypes: config.grantTypes,
    appType: nonZero(config.appType),
    clientId: app.clientId,
    authMethodType: nonZero(config.authMethodType),
    postLogoutRedirectUris: config.postLogoutRedirectUris,
    version: nonZero(config.version),
    noneCompliant: compliance.noneCompliant,
    complianceProblems: compliance.complianceProblems,
    devMode: config.devMode,
    accessTokenType: nonZero(config.accessTokenType),
    accessTokenRoleAssertion: config.accessTokenRoleAssertion,
    idTokenRoleAssertion: config.idTokenRoleAssertion,
    idTokenUserinfoAssertion: config.idTokenUserinfoAssertion,
    clockSkew: config.clockSkewMs > 0 ? formatProtoDuration(config.clockSkewMs) : undefined,
    additionalOrigins: config.additionalOrigins,
    skipNativeAppSuccessPage: config.skipNativeAppSuccessPage,
    backChannelLogoutUri: config.backChannelLogoutUri,
    requirePushedAuthorizationRequests: config.requirePushedAuthorizationRequests,
    dpopBoundAccessTokens: config.dpopBoundAccessTokens,
    ...lifetimeFields(config),
    loginVersion: config.loginVersion,
  };
}

/** An app's own lifetimes as the API and the export show them (absent: the instance's). */
export function lifetimeFields(config: View<OidcAppConfig>): Partial<Record<(typeof LIFETIME_FIELDS)[number][0], string>> {
  const out: Partial<Record<(typeof LIFETIME_FIELDS)[number][0], string>> = {};
  for (const [field, key] of LIFETIME_FIELDS) {
    const ms = config.lifetimes?.[key];
    if (ms !== undefined) out[field] = formatProtoDuration(ms);
  }
  return out;
}

/** True when two stored configurations are the same (ZITADEL refuses an update that changes nothing). */
export function sameOidcConfig(a: View<OidcAppConfig>, b: View<OidcAppConfig>): boolean {
  const left = a as unknown as Record<string, unknown>;
  const right = b as unknown as Record<string, unknown>;
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  return [...keys].every((key) => JSON.stringify(left[key]) === JSON.stringify(right[key]));
}
