import { alreadyExists, invalidArgument, type ApiError } from './errors.js';

/**
 * Stored records. Enum-valued fields hold ZITADEL's enum names, so the provisioning API and the
 * export bundle emit them unchanged. Times are epoch milliseconds.
 */
export interface Meta {
  createdAt: number;
  changedAt: number;
  /** Monotonic per-record change counter, emitted as `details.sequence`. */
  sequence: number;
}

export type OrgState = 'ORG_STATE_ACTIVE' | 'ORG_STATE_INACTIVE';

export interface OrgDomain {
  domainName: string;
  isVerified: boolean;
  isPrimary: boolean;
  validationType?: string;
}

export interface OrgRecord extends Meta {
  id: string;
  name: string;
  state: OrgState;
  domains: OrgDomain[];
}

export interface ProjectRole {
  key: string;
  displayName: string;
  group: string;
}

export interface ProjectRecord extends Meta {
  id: string;
  orgId: string;
  name: string;
  state: 'PROJECT_STATE_ACTIVE' | 'PROJECT_STATE_INACTIVE';
  projectRoleAssertion: boolean;
  projectRoleCheck: boolean;
  hasProjectCheck: boolean;
  privateLabelingSetting: string;
  roles: ProjectRole[];
  /** Resource indicators (RFC 8707) naming this project's APIs: a token asked for one has the URI and the project in `aud`. */
  resourceUris?: string[];
}

export interface OidcAppConfig {
  redirectUris: string[];
  responseTypes: string[];
  grantTypes: string[];
  appType: string;
  authMethodType: string;
  postLogoutRedirectUris: string[];
  version: string;
  devMode: boolean;
  accessTokenType: string;
  accessTokenRoleAssertion: boolean;
  idTokenRoleAssertion: boolean;
  idTokenUserinfoAssertion: boolean;
  /** milliseconds, 0-5000 */
  clockSkewMs: number;
  additionalOrigins: string[];
  skipNativeAppSuccessPage: boolean;
  backChannelLogoutUri: string;
  /** RFC 9126: authorization requests only as pushed ones (a `request_uri` from /oauth/v2/par). */
  requirePushedAuthorizationRequests?: boolean;
  /** RFC 9449 §5.2 (`dpop_bound_access_tokens`): tokens only with a DPoP proof, so always sender-constrained. */
  dpopBoundAccessTokens?: boolean;
  /** This app's token lifetimes (ms), each at most the instance's; absent: the instance's. */
  lifetimes?: AppTokenLifetimes;
  loginVersion?: { loginV1?: Record<string, never>; loginV2?: { baseUri?: string } };
}

/** Token lifetimes of one app (ms); each one set is at most the instance's (SESAME_*_LIFETIME). */
export interface AppTokenLifetimes {
  accessToken?: number;
  idToken?: number;
  refreshTokenIdle?: number;
  refreshToken?: number;
}

/**
 * How an app with each of ZITADEL's auth method types proves who it is: with a client secret
 * (generated for it), with a registered key (private_key_jwt), or not at all (a public client).
 * The one table every check of an app's auth method reads.
 */
export type AppCredential = 'secret' | 'key' | 'public';
const APP_CREDENTIAL: Readonly<Record<string, AppCredential>> = {
  OIDC_AUTH_METHOD_TYPE_BASIC: 'secret',
  OIDC_AUTH_METHOD_TYPE_POST: 'secret',
  API_AUTH_METHOD_TYPE_BASIC: 'secret',
  OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT: 'key',
  API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT: 'key',
  OIDC_AUTH_METHOD_TYPE_NONE: 'public',
};

/** The credential an auth method type uses (undefined for a type Sesame does not know). */
export function appCredential(authMethodType: string): AppCredential | undefined {
  return Object.hasOwn(APP_CREDENTIAL, authMethodType) ? APP_CREDENTIAL[authMethodType] : undefined;
}

export function usesClientSecret(authMethodType: string): boolean {
  return appCredential(authMethodType) === 'secret';
}

export interface AppRecord extends Meta {
  id: string;
  projectId: string;
  orgId: string;
  name: string;
  state: 'APP_STATE_ACTIVE' | 'APP_STATE_INACTIVE';
  clientId: string;
  /** SHA-256 of the client secret, when the auth method uses one. */
  secretHash?: Uint8Array;
  oidc?: OidcAppConfig;
  api?: { authMethodType: string };
  /** Present on an app created by dynamic client registration (RFC 7591), managed with RFC 7592. */
  registration?: ClientRegistration;
  /**
   * The instance vouches for the app's back-channel logout URI: a caller with an instance role set
   * it through the management API, or an instance owner imported the app. Absent (an org or
   * project administrator set it, the client registered itself, or the app was stored before
   * Sesame recorded this): the receiver must be a public host, when it is set and at each delivery,
   * since whoever set it might aim Sesame's logout POSTs into the network it runs in.
   */
  logoutReceiverByInstance?: true;
}

/**
 * What RFC 7591 registration adds to an OIDC app: the registration access token (its SHA-256
 * only) and the descriptive metadata that has no place in the OIDC configuration, returned as
 * registered. Not exported: an imported app is managed through the management API.
 */
export interface ClientRegistration {
  accessTokenHash: Uint8Array;
  /** When the client id was issued (seconds, RFC 7591 `client_id_issued_at`). */
  issuedAt: number;
  metadata: RegisteredClientInfo;
  /**
   * The registered `scope` (RFC 7591 §2): the scopes the client may ask for besides `openid`;
   * others in its authorization requests are dropped. Absent: no bound.
   */
  scopes?: string[];
  /** Registered without an initial access token (open registration): by anyone at all. */
  anonymous?: true;
}

/** Descriptive client metadata (RFC 7591 §2), shown as registered; none of it grants anything. */
export interface RegisteredClientInfo {
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  policy_uri?: string;
  tos_uri?: string;
  contacts?: string[];
  software_id?: string;
  software_version?: string;
}

export interface PublicKeyRecord extends Meta {
  id: string;
  orgId: string;
  type: 'KEY_TYPE_JSON';
  expirationDate: number;
  /** SPKI PEM of the registered public key. */
  publicKeyPem: string;
}

export interface AppKeyRecord extends PublicKeyRecord {
  appId: string;
  projectId: string;
  clientId: string;
}

export interface MachineKeyRecord extends PublicKeyRecord {
  userId: string;
}

export type UserState = 'USER_STATE_ACTIVE' | 'USER_STATE_INACTIVE' | 'USER_STATE_LOCKED' | 'USER_STATE_SUSPEND' | 'USER_STATE_INITIAL';

export interface HumanProfile {
  firstName: string;
  lastName: string;
  nickName: string;
  displayName: string;
  preferredLanguage: string;
  gender: string;
}

export interface HumanData {
  profile: HumanProfile;
  email: { email: string; isEmailVerified: boolean };
  phone?: { phone: string; isPhoneVerified: boolean };
  /** Encoded password hash (PHC / modular crypt), absent when the user has no password. */
  passwordHash?: string;
  passwordChangeRequired: boolean;
  /** base32 TOTP secret, encrypted with the master key. */
  otpSecretSealed?: Uint8Array;
  /** A TOTP secret handed out to the person (AddMyAuthFactorOTP), sealed, until a code from it confirms it. */
  otpPendingSealed?: Uint8Array;
  /** One-time codes by email are a second factor of the person (ZITADEL's OTP email). */
  otpEmail?: true;
  failedPasswordAttempts: number;
  /** Wrong TOTP codes since the last right one (the lockout policy's maxOtpAttempts). */
  failedOtpAttempts?: number;
  /** When the person last skipped the TOTP enrollment prompt (epoch ms; mfaInitSkipLifetime). */
  mfaInitSkippedAt?: number;
  /** Accounts at identity providers the person signs in with (ZITADEL's user links). */
  idpLinks?: readonly IdpLink[];
  /** Passkeys and security keys (WebAuthn credentials). */
  webauthn?: readonly WebAuthnToken[];
  /** When the person last skipped the offer to set up a passkey (epoch ms). */
  passkeyPromptSkippedAt?: number;
}

/**
 * A WebAuthn credential of a person: a passkey (`passwordless`: a first factor with user
 * verification, ZITADEL's passwordless token) or a security key (`u2f`: a second factor).
 */
export interface WebAuthnToken {
  /** The credential id (base64url), as the authenticator named it. */
  id: string;
  /** Sesame's id of the token (ZITADEL's token id in the API). */
  tokenId: string;
  /** The COSE public key. */
  publicKey: Uint8Array;
  /** The signature counter last seen (a clone's older counter is refused). */
  counter: number;
  transports?: readonly string[];
  name: string;
  kind: 'passwordless' | 'u2f';
  createdAt: number;
}

/** At most this many passkeys and security keys per person. */
export const MAX_WEBAUTHN_TOKENS = 10;

/** Why an authenticator cannot be added to a person's tokens (registered already, or the most kept), else undefined. */
export function webauthnTokenRefusal(tokens: readonly WebAuthnToken[], credentialId: string): ApiError | undefined {
  if (tokens.some((t) => t.id === credentialId)) return alreadyExists('USER-W3bA1', 'this authenticator is already registered (Errors.User.WebAuthN.AlreadyExists)');
  if (tokens.length >= MAX_WEBAUTHN_TOKENS) return invalidArgument('USER-W3bAM', `a person has at most ${MAX_WEBAUTHN_TOKENS} passkeys and security keys`);
  return undefined;
}
export const U2F_SECOND_FACTOR = 'SECOND_FACTOR_TYPE_U2F';
export const U2F_WITH_VERIFICATION = 'MULTI_FACTOR_TYPE_U2F_WITH_VERIFICATION';

/** A person's account at an identity provider: who they are there (`externalUserId`, the upstream's subject). */
export interface IdpLink {
  idpId: string;
  externalUserId: string;
  /** The name the provider shows for them (ZITADEL's `providedUserName`). */
  userName: string;
}

/** At most this many links per person (a bound on the user record every thread holds). */
export const MAX_IDP_LINKS = 20;

export interface MachineData {
  name: string;
  description: string;
  accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' | 'ACCESS_TOKEN_TYPE_JWT';
}

/** The secret a machine user authenticates with at the token endpoint (owned by the clients actor). */
export interface MachineSecretRecord extends Meta {
  id: string;
  userId: string;
  secretHash: Uint8Array;
}

export interface UserRecord extends Meta {
  id: string;
  orgId: string;
  userName: string;
  state: UserState;
  human?: HumanData;
  machine?: MachineData;
  metadata?: Record<string, Uint8Array>;
  /**
   * The user's revocation horizon (ms, the injected clock): every token, refresh family, browser
   * session and pending sign-in of the user that began before it is void (domain/revocation-horizon.ts).
   * Moved by what must end them: a lock or deactivation by an administrator, a password set or
   * changed, a machine secret set, a lock after a right password and wrong codes, re-creation of an id.
   */
  revokedBefore?: number;
  /**
   * The user name is the login name and unique in the instance: the org's domain policy said
   * `userLoginMustBeDomain: false` when the user was made. Absent: `username@orgdomain`.
   */
  instanceWideName?: true;
}

export interface PatRecord extends Meta {
  id: string;
  userId: string;
  orgId: string;
  tokenHash: Uint8Array;
  expirationDate: number;
}

export interface UserGrantRecord extends Meta {
  id: string;
  userId: string;
  orgId: string;
  projectId: string;
  projectGrantId: string;
  roleKeys: string[];
}

/** A membership: `instance`, `org:<orgId>` or `project:<projectId>`. */
export interface MemberRecord extends Meta {
  /** `<scope>|<userId>` */
  id: string;
  scope: string;
  userId: string;
  roles: string[];
}

export const FAR_FUTURE = Date.parse('9999-12-31T23:59:59Z');

/**
 * ZITADEL's lockout policy: after this many failed password (or TOTP) checks the user is locked
 * (0 = never); `showLockoutFailure` decides whether the login page says so.
 */
export interface LockoutPolicy {
  maxPasswordAttempts: number;
  maxOtpAttempts: number;
  showLockoutFailure: boolean;
}

/**
 * ZITADEL's login policy as Sesame enforces it (src/zitadel/login-policy.ts decides what is accepted;
 * src/login/ enforces it). Lifetimes are milliseconds.
 */
export interface LoginPolicy {
  allowUsernamePassword: boolean;
  allowRegister: boolean;
  /** The login offers the identity providers of `idps`. */
  allowExternalIdp: boolean;
  forceMfa: boolean;
  forceMfaLocalOnly: boolean;
  /** The login's "forgot password" link is not shown, and a reset is not started from the login. */
  hidePasswordReset: boolean;
  ignoreUnknownUsernames: boolean;
  /** PASSWORDLESS_TYPE_ALLOWED: people sign in with a passkey, and are offered one after a password sign-in. */
  passwordlessType: string;
  /** Always false: refused by the API. */
  allowDomainDiscovery: boolean;
  disableLoginWithEmail: boolean;
  disableLoginWithPhone: boolean;
  /** Always empty: refused by the API (no login without an application). */
  defaultRedirectUri: string;
  passwordCheckLifetimeMs: number;
  externalLoginCheckLifetimeMs: number;
  mfaInitSkipLifetimeMs: number;
  secondFactorCheckLifetimeMs: number;
  multiFactorCheckLifetimeMs: number;
  /** Allowed second factors: SECOND_FACTOR_TYPE_OTP, SECOND_FACTOR_TYPE_OTP_EMAIL and SECOND_FACTOR_TYPE_U2F. */
  secondFactors: string[];
  /** MULTI_FACTOR_TYPE_U2F_WITH_VERIFICATION: a passkey serves as the second factor after a password (user verified). */
  multiFactors: string[];
  /** The identity providers the login offers (with `allowExternalIdp`): the org's own or the instance's. */
  idps?: LoginPolicyIdp[];
}

export type IdpOwnerType = 'IDP_OWNER_TYPE_ORG' | 'IDP_OWNER_TYPE_SYSTEM';

export interface LoginPolicyIdp {
  idpId: string;
  ownerType: IdpOwnerType;
}

/**
 * ZITADEL's password complexity policy: every password set (registration, change, reset, by an
 * administrator, an import's plain password) meets it (src/domain/password-complexity.ts).
 */
export interface PasswordComplexityPolicy {
  minLength: number;
  hasUppercase: boolean;
  hasLowercase: boolean;
  hasNumber: boolean;
  hasSymbol: boolean;
}

/** ZITADEL's privacy policy: links and the support address on the login pages; terms accepted at registration. */
export interface PrivacyPolicy {
  tosLink: string;
  privacyLink: string;
  helpLink: string;
  supportEmail: string;
  docsLink: string;
  customLink: string;
  customLinkText: string;
}

/** ZITADEL's label policy (branding) of the login pages and mails. Colours are CSS hex colours or empty (Sesame's). */
export interface LabelPolicy {
  primaryColor: string;
  backgroundColor: string;
  warnColor: string;
  fontColor: string;
  primaryColorDark: string;
  backgroundColorDark: string;
  warnColorDark: string;
  fontColorDark: string;
  /** The login name is shown without its `@domain`. */
  hideLoginNameSuffix: boolean;
  /** "Secured by Sesame" is not shown. */
  disableWatermark: boolean;
  /** THEME_MODE_AUTO (follows the browser), THEME_MODE_LIGHT or THEME_MODE_DARK. */
  themeMode: string;
  /** Images and font (the assets API), by the SHA-256 they are stored under (LabelAssetsActor). */
  logo?: string;
  logoDark?: string;
  icon?: string;
  iconDark?: string;
  font?: string;
}

/**
 * ZITADEL's domain policy: whether login names carry the org's domain (`userLoginMustBeDomain`;
 * without it a user name is the login name, unique in the instance), whether added domains must be
 * verified, and whether the SMTP sender must be on the instance's domain.
 */
export interface DomainPolicy {
  userLoginMustBeDomain: boolean;
  validateOrgDomains: boolean;
  smtpSenderAddressMatchesInstanceDomain: boolean;
}

/** ZITADEL's notification policy: a mail tells the person their password changed. */
export interface NotificationPolicy {
  passwordChange: boolean;
}

/** The fields of one notification message (ZITADEL's MessageCustomText); an SMS has `text` only. */
export interface MessageText {
  title: string;
  preHeader: string;
  subject: string;
  greeting: string;
  text: string;
  buttonText: string;
  footerText: string;
}

/**
 * An org's (or the instance's) own message texts: per message kind (ZITADEL's `InitCode`,
 * `PasswordReset`, …) and language, the fields set (the built-in text fills the rest).
 */
export type MessageTexts = Record<string, Record<string, Partial<MessageText>>>;

export type PolicyKind = 'lockout' | 'login' | 'passwordComplexity' | 'privacy' | 'label' | 'labelPreview' | 'domain' | 'notification' | 'messageTexts' | 'idps';
export interface PolicyTypes {
  lockout: LockoutPolicy;
  login: LoginPolicy;
  passwordComplexity: PasswordComplexityPolicy;
  privacy: PrivacyPolicy;
  /** The label policy in force. */
  label: LabelPolicy;
  /** The label policy being edited: in force once activated (ZITADEL's preview). */
  labelPreview: LabelPolicy;
  domain: DomainPolicy;
  notification: NotificationPolicy;
  messageTexts: MessageTexts;
  /** An org's (or the instance's) identity providers: one record per owner, so every thread holds them with the directory. */
  idps: IdentityProviders;
}

/** Org id of the instance's default policies (an org's own policy comes first). */
export const INSTANCE_POLICY = '';

/** An org's custom policy, or the instance's default (orgId ''); without either the built-in default applies. Id: `<kind>:<orgId>`. */
export interface PolicyRecord<K extends PolicyKind = PolicyKind> extends Meta {
  id: string;
  kind: K;
  orgId: string;
  policy: PolicyTypes[K];
}

/** Sesame's second factors: TOTP, and one-time codes by email. */
export const OTP_SECOND_FACTOR = 'SECOND_FACTOR_TYPE_OTP';
export const OTP_EMAIL_SECOND_FACTOR = 'SECOND_FACTOR_TYPE_OTP_EMAIL';

const HOUR = 3_600_000;

/**
 * The instance defaults: ZITADEL's (lifetimes 240h / 240h / 18h / 12h), except that Sesame does not
 * offer TOTP enrollment unless an org asks for it (`mfaInitSkipLifetime` 0 = never prompt, as in
 * ZITADEL) and does not reveal unknown login names (`ignoreUnknownUsernames`).
 */
const DEFAULT_LABEL: LabelPolicy = {
  primaryColor: '',
  backgroundColor: '',
  warnColor: '',
  fontColor: '',
  primaryColorDark: '',
  backgroundColorDark: '',
  warnColorDark: '',
  fontColorDark: '',
  hideLoginNameSuffix: false,
  disableWatermark: false,
  themeMode: 'THEME_MODE_AUTO',
};

export const DEFAULT_POLICIES: { [K in PolicyKind]: PolicyTypes[K] } = {
  // NIST SP 800-63B §5.1.1.2: length, not composition rules; an instance or org may ask for classes.
  passwordComplexity: { minLength: 8, hasUppercase: false, hasLowercase: false, hasNumber: false, hasSymbol: false },
  privacy: { tosLink: '', privacyLink: '', helpLink: '', supportEmail: '', docsLink: '', customLink: '', customLinkText: '' },
  label: DEFAULT_LABEL,
  labelPreview: DEFAULT_LABEL,
  // Login names are `username@primarydomain` (docs/compatibility.md §2.4).
  domain: { userLoginMustBeDomain: true, validateOrgDomains: true, smtpSenderAddressMatchesInstanceDomain: false },
  notification: { passwordChange: true },
  messageTexts: {},
  idps: { providers: [] },
  lockout: { maxPasswordAttempts: 0, maxOtpAttempts: 0, showLockoutFailure: true },
  login: {
    allowUsernamePassword: true,
    allowRegister: true,
    allowExternalIdp: false,
    forceMfa: false,
    forceMfaLocalOnly: false,
    hidePasswordReset: false,
    ignoreUnknownUsernames: true,
    passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED',
    allowDomainDiscovery: false,
    disableLoginWithEmail: false,
    disableLoginWithPhone: false,
    defaultRedirectUri: '',
    passwordCheckLifetimeMs: 240 * HOUR,
    externalLoginCheckLifetimeMs: 240 * HOUR,
    mfaInitSkipLifetimeMs: 0,
    secondFactorCheckLifetimeMs: 18 * HOUR,
    multiFactorCheckLifetimeMs: 12 * HOUR,
    secondFactors: [OTP_SECOND_FACTOR],
    multiFactors: [],
  },
};

/**
 * ZITADEL's IdP templates Sesame signs people in with: generic OIDC and OAuth 2.0, and the presets
 * (GitHub, GitHub Enterprise, GitLab, self-hosted GitLab, Google, Microsoft Entra ID), which are
 * OIDC or OAuth with endpoints filled in; LDAP. What an org or the instance may add.
 */
export type IdpKind = 'oidc' | 'oauth' | 'github' | 'githubEnterprise' | 'gitlab' | 'gitlabSelfHosted' | 'google' | 'azure' | 'ldap';

/** ZITADEL's provider options: what a sign-in with an account nobody is linked to may do. */
export interface IdpOptions {
  /** The person may link the account to an existing one they sign in to. */
  isLinkingAllowed: boolean;
  /** The person may create a new account from it. */
  isCreationAllowed: boolean;
  /** The account is created without asking (when creation is allowed). */
  isAutoCreation: boolean;
  /** The person's profile is updated from the provider at each sign-in. */
  isAutoUpdate: boolean;
  /** AUTO_LINKING_OPTION_EMAIL: an account with the same verified email is linked (both sides verified). */
  autoLinking: 'AUTO_LINKING_OPTION_UNSPECIFIED' | 'AUTO_LINKING_OPTION_EMAIL';
}

export interface LdapSettings {
  /** ldap:// or ldaps:// URLs, tried in order. */
  servers: string[];
  startTls: boolean;
  baseDn: string;
  bindDn: string;
  userBase: string;
  userObjectClasses: string[];
  userFilters: string[];
  timeoutMs: number;
  /** Which LDAP attribute gives which profile field (empty: not mapped). */
  attributes: Record<string, string>;
}

export interface IdentityProvider extends Meta {
  id: string;
  name: string;
  kind: IdpKind;
  options: IdpOptions;
  clientId: string;
  /** The client secret at the provider (LDAP: the bind password), sealed with the master key (it is sent, so not a digest). */
  clientSecretSealed?: Uint8Array;
  scopes: string[];
  /** OIDC kinds: the issuer (discovery); `isIdTokenMapping`: claims from the ID token instead of userinfo. */
  issuer?: string;
  isIdTokenMapping?: boolean;
  /** PKCE (S256) on the upstream round trip. */
  usePkce?: boolean;
  /** OAuth kinds: the endpoints and the user endpoint's attribute that identifies the person. */
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  userEndpoint?: string;
  idAttribute?: string;
  /** Microsoft: the tenant (`common`, `organizations`, `consumers` or a tenant id) and whether its emails count as verified. */
  tenant?: string;
  emailVerified?: boolean;
  ldap?: LdapSettings;
  /** A legacy OIDC provider's mappings: the claim a new person's user name and display name come from. */
  userNameClaim?: 'email' | 'preferred_username';
  displayNameClaim?: 'email' | 'preferred_username';
  /** Written by an instance administrator: may be at this machine or in its network (else public addresses only). */
  internalAllowed?: true;
}

export interface IdentityProviders {
  providers: IdentityProvider[];
}

/** At most this many identity providers per org (and for the instance). */
export const MAX_IDPS = 50;
