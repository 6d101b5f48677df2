import { z } from 'zod';
import { EMAIL, MAX_PASSWORD } from '../domain/human-users.js';
import { DEFAULT_POLICIES, type PolicyKind, type PolicyTypes } from '../model/records.js';
import { enumField } from './enums.js';
import { assetPath } from '../domain/label-asset.js';
import { loginPolicySchema, loginPolicyView, toLoginPolicy } from './login-policy.js';
import { flag, text, uint64 } from './validation.js';

/**
 * Every org policy Sesame has, in one table: where its API lives (`/management/v1/policies/<path>`
 * for an org, `/admin/v1/policies/<path>` for the instance default), its field in an import
 * bundle, the schema of its input, what of an input Sesame stores (and what it cannot enforce,
 * each a sentence naming the field: the API refuses it, the import leaves it out and reports it),
 * and its JSON as ZITADEL writes it (zero values omitted). The API routes, the import and the
 * export read this table; nothing else knows a policy's shape.
 */
export interface PolicyDefinition<K extends PolicyKind> {
  kind: K;
  /** Under `/management/v1/policies/` and `/admin/v1/policies/`. */
  path: string;
  /** The field in a bundle's org (`DataOrg`), if it travels in one. */
  bundleField?: string;
  /** The import report's `type` for it (docs/compatibility.md §1.2). */
  errorType: string;
  schema: z.ZodType<unknown>;
  toPolicy(input: unknown): { policy: PolicyTypes[K]; unsupported: string[] };
  view(policy: PolicyTypes[K]): Record<string, unknown>;
  /** Its JSON in a bundle, where that differs from the API's. */
  bundleView?(policy: PolicyTypes[K]): Record<string, unknown>;
}

const nonZero = <T>(v: T, zero: T): T | undefined => (v === zero ? undefined : v);
const omitZero = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== '' && v !== false && v !== undefined));

const lockoutSchema = z.object({ maxPasswordAttempts: uint64(), maxOtpAttempts: uint64(), showLockoutFailure: flag() });

const complexitySchema = z.object({
  minLength: uint64().refine((n) => n <= MAX_PASSWORD, `must be at most ${MAX_PASSWORD}`),
  hasUppercase: flag(),
  hasLowercase: flag(),
  hasNumber: flag(),
  hasSymbol: flag(),
});

/** A link on the login pages: http(s) only, so no `javascript:` reaches an href. */
const link = () => text(500).refine((v) => v === '' || (URL.canParse(v) && /^https?:$/.test(new URL(v).protocol)), 'must be an http(s) URL');
const privacySchema = z.object({
  tosLink: link(),
  privacyLink: link(),
  helpLink: link(),
  supportEmail: text(200).refine((v) => v === '' || EMAIL.test(v), 'must be an email address'),
  docsLink: link(),
  customLink: link(),
  customLinkText: text(200),
});

const THEME_MODES = ['THEME_MODE_UNSPECIFIED', 'THEME_MODE_AUTO', 'THEME_MODE_LIGHT', 'THEME_MODE_DARK'] as const;
/** A CSS hex colour: it goes into the pages' style sheet, so nothing else may. */
const colour = () => text(9).refine((v) => v === '' || /^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/.test(v), 'must be a hex colour such as #5469d4');
const labelSchema = z.object({
  primaryColor: colour(),
  backgroundColor: colour(),
  warnColor: colour(),
  fontColor: colour(),
  primaryColorDark: colour(),
  backgroundColorDark: colour(),
  warnColorDark: colour(),
  fontColorDark: colour(),
  hideLoginNameSuffix: flag(),
  disableWatermark: flag(),
  themeMode: enumField(THEME_MODES),
});

const domainSchema = z.object({ userLoginMustBeDomain: flag(), validateOrgDomains: flag(), smtpSenderAddressMatchesInstanceDomain: flag() });
const notificationSchema = z.object({ passwordChange: flag() });

const as = <T>(input: unknown) => input as T;

const lockout: PolicyDefinition<'lockout'> = {
  kind: 'lockout',
  path: 'lockout',
  bundleField: 'lockoutPolicy',
  errorType: 'lockout_policy',
  schema: lockoutSchema,
  toPolicy: (input) => ({ policy: as<PolicyTypes['lockout']>(input), unsupported: [] }),
  view: (p) => ({
    maxPasswordAttempts: p.maxPasswordAttempts ? String(p.maxPasswordAttempts) : undefined,
    maxOtpAttempts: p.maxOtpAttempts ? String(p.maxOtpAttempts) : undefined,
    showLockoutFailure: p.showLockoutFailure || undefined,
  }),
  // DataOrg's lockout policy has uint32 counts (numbers); an explicit false comes back false.
  bundleView: (p) => ({ maxPasswordAttempts: p.maxPasswordAttempts, maxOtpAttempts: p.maxOtpAttempts || undefined, showLockoutFailure: p.showLockoutFailure }),
};

const login: PolicyDefinition<'login'> = {
  kind: 'login',
  path: 'login',
  bundleField: 'loginPolicy',
  errorType: 'login_policy',
  schema: loginPolicySchema,
  toPolicy: (input) => toLoginPolicy(as(input)),
  view: (p) => loginPolicyView(p),
};

const passwordComplexity: PolicyDefinition<'passwordComplexity'> = {
  kind: 'passwordComplexity',
  path: 'password/complexity',
  bundleField: 'passwordComplexityPolicy',
  errorType: 'password_complexity_policy',
  schema: complexitySchema,
  toPolicy: (input) => ({ policy: as<PolicyTypes['passwordComplexity']>(input), unsupported: [] }),
  view: (p) => ({
    minLength: p.minLength ? String(p.minLength) : undefined,
    ...omitZero({ hasUppercase: p.hasUppercase, hasLowercase: p.hasLowercase, hasNumber: p.hasNumber, hasSymbol: p.hasSymbol }),
  }),
};

const privacy: PolicyDefinition<'privacy'> = {
  kind: 'privacy',
  path: 'privacy',
  bundleField: 'privacyPolicy',
  errorType: 'privacy_policy',
  schema: privacySchema,
  toPolicy: (input) => ({ policy: as<PolicyTypes['privacy']>(input), unsupported: [] }),
  view: (p) => omitZero({ ...p }),
};

/** The label policy's fields, without its images and font (a bundle carries none). */
function labelFields(p: PolicyTypes['label']): Record<string, unknown> {
  const { logo: _l, logoDark: _ld, icon: _i, iconDark: _id, font: _f, ...fields } = p;
  return omitZero({ ...fields, themeMode: nonZero(p.themeMode, 'THEME_MODE_UNSPECIFIED') });
}

/** ZITADEL's view: the fields, and where the images and font are served. */
function labelView(p: PolicyTypes['label']): Record<string, unknown> {
  const url = (id: string | undefined) => (id ? assetPath(id) : undefined);
  return { ...labelFields(p), logoUrl: url(p.logo), logoUrlDark: url(p.logoDark), iconUrl: url(p.icon), iconUrlDark: url(p.iconDark), fontUrl: url(p.font) };
}

/** The label policy as edited: the one in force is its copy when activated (`…/label/_activate`). */
const labelPreview: PolicyDefinition<'labelPreview'> = {
  kind: 'labelPreview',
  path: 'label',
  errorType: 'label_policy',
  schema: labelSchema,
  toPolicy: (input) => ({ policy: as<PolicyTypes['label']>(input), unsupported: [] }),
  view: labelView,
  bundleView: labelFields,
};

/** The label policy in force: read through the API, carried by a bundle (imported activated). */
const label: PolicyDefinition<'label'> = { ...labelPreview, kind: 'label', bundleField: 'labelPolicy' };

const domain: PolicyDefinition<'domain'> = {
  kind: 'domain',
  path: 'domain',
  bundleField: 'domainPolicy',
  errorType: 'domain_policy',
  schema: domainSchema,
  toPolicy: (input) => ({ policy: as<PolicyTypes['domain']>(input), unsupported: [] }),
  view: (p) => omitZero({ ...p }),
};

const notification: PolicyDefinition<'notification'> = {
  kind: 'notification',
  path: 'notification',
  errorType: 'notification_policy',
  schema: notificationSchema,
  toPolicy: (input) => ({ policy: as<PolicyTypes['notification']>(input), unsupported: [] }),
  view: (p) => omitZero({ ...p }),
};

/** The org policies; an org's message texts, kept beside them, have their own API (src/zitadel/message-texts.ts). */
export type OrgPolicyKind = Exclude<PolicyKind, 'messageTexts' | 'idps'>;

export const POLICIES: { readonly [K in OrgPolicyKind]: PolicyDefinition<K> } = { lockout, login, passwordComplexity, privacy, label, labelPreview, domain, notification };

/** The policies a bundle carries, in the import's order (docs/compatibility.md §1.2: domain, label, lockout, login, complexity, privacy). */
export const BUNDLE_POLICIES: readonly PolicyDefinition<OrgPolicyKind>[] = [domain, label, lockout, login, passwordComplexity, privacy] as PolicyDefinition<OrgPolicyKind>[];

/** A policy as stored, completed with the defaults of fields added since it was written. */
export function completePolicy<K extends PolicyKind>(kind: K, stored: Partial<PolicyTypes[K]>): PolicyTypes[K] {
  return { ...DEFAULT_POLICIES[kind], ...stored };
}
