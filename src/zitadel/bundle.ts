import { z } from 'zod';
import { API_AUTH_METHOD_TYPE, enumField, KEY_TYPE } from './enums.js';
import { oidcConfigFields } from './oidc-config.js';
import { addProjectSchema } from './projects.js';
import { addMachineSchema, importHumanSchema } from './users.js';
import { bytes, flag, list, pathSegment, requiredText, text, timestamp } from './validation.js';

/**
 * The import bundle's parts (docs/compatibility.md §1.4, `DataOrg`) as zod schemas over camelCased JSON. Each list
 * element is validated on its own, so one bad element is reported and skipped while the rest
 * imports. Unknown fields are ignored, as protojson's DiscardUnknown does.
 */
const id = () => pathSegment();

const USER_STATES = ['USER_STATE_UNSPECIFIED', 'USER_STATE_ACTIVE', 'USER_STATE_INACTIVE', 'USER_STATE_DELETED', 'USER_STATE_LOCKED', 'USER_STATE_SUSPEND', 'USER_STATE_INITIAL'] as const;
export const ORG_STATES = ['ORG_STATE_UNSPECIFIED', 'ORG_STATE_ACTIVE', 'ORG_STATE_INACTIVE', 'ORG_STATE_REMOVED'] as const;
const DOMAIN_VALIDATION_TYPES = ['DOMAIN_VALIDATION_TYPE_UNSPECIFIED', 'DOMAIN_VALIDATION_TYPE_HTTP', 'DOMAIN_VALIDATION_TYPE_DNS'] as const;

/** Sesame extension: the SHA-256 digest of a client secret, standard base64 (export with passwords). */
const secretDigest = () => bytes().refine((b) => b.length === 32, 'must be a base64 SHA-256 digest (32 bytes)');

export const orgSchema = z.object({ name: requiredText(200) });

export const domainSchema = z.object({
  domainName: requiredText(253),
  isVerified: flag(),
  isPrimary: flag(),
  validationType: enumField(DOMAIN_VALIDATION_TYPES),
});

// The human user's OTP secret is checked separately, so a bad one fails only the OTP (`human_user_otp`).
export const humanUserSchema = z.object({
  userId: id().optional(),
  user: importHumanSchema.extend({ otpCode: text(300) }),
  state: enumField(USER_STATES),
});

export const machineUserSchema = z.object({
  userId: id().optional(),
  user: addMachineSchema,
  state: enumField(USER_STATES),
  clientSecretSha256: secretDigest().optional(),
});

export const userMetadataSchema = z.object({
  id: id(),
  key: pathSegment(),
  value: bytes().refine((v) => v.length >= 1 && v.length <= 500_000, 'must hold 1-500000 bytes'),
});

export const projectSchema = z.object({ projectId: id(), project: addProjectSchema });

export const projectRoleSchema = z.object({
  projectId: id(),
  roleKey: requiredText(200),
  displayName: text(200),
  group: text(200),
});

const appFields = { appId: id(), clientId: id().optional(), clientSecretSha256: secretDigest().optional() };

export const oidcAppSchema = z.object({
  ...appFields,
  app: z.object({ projectId: id().optional(), name: requiredText(200), ...oidcConfigFields }),
});

export const apiAppSchema = z.object({
  ...appFields,
  app: z.object({ projectId: id().optional(), name: requiredText(200), authMethodType: enumField(API_AUTH_METHOD_TYPE) }),
});

const publicKey = () =>
  bytes().transform((b, ctx) => {
    const pem = b.toString('utf8');
    if (!pem.includes('-----BEGIN')) {
      ctx.addIssue({ code: 'custom', message: 'must be the base64 of a PEM public key' });
      return z.NEVER;
    }
    return pem;
  });

export const appKeySchema = z.object({
  id: id(),
  projectId: id().optional(),
  appId: id(),
  clientId: text(200),
  type: enumField(KEY_TYPE),
  expirationDate: timestamp().optional(),
  publicKey: publicKey(),
});

export const machineKeySchema = z.object({
  keyId: id(),
  userId: id(),
  type: enumField(KEY_TYPE),
  expirationDate: timestamp().optional(),
  publicKey: publicKey(),
});

export const userGrantSchema = z.object({
  userId: id(),
  projectId: id(),
  projectGrantId: text(200),
  roleKeys: list(z.string().min(1).max(200)),
});

export const orgMemberSchema = z.object({ userId: id(), roles: z.array(z.string()).min(1, 'at least one role is required') });

export const projectMemberSchema = z.object({
  projectId: id(),
  userId: id(),
  roles: z.array(z.string()).min(1, 'at least one role is required'),
});

/** Bundle parts Sesame has no model for: each element is reported (type, id) and skipped. */
export interface UnsupportedPart {
  field: string;
  type: string;
  /** The error id ZITADEL reports for an element (docs/compatibility.md §1.2). */
  id(orgId: string, element: Record<string, unknown>): string;
  what: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));
const byLang = (orgId: string, e: Record<string, unknown>) => `${orgId}_${str(e.language)}`;

export const UNSUPPORTED_LISTS: readonly UnsupportedPart[] = [
  { field: 'jwtIdps', type: 'jwt_idp', id: (_o, e) => str(e.idpId), what: 'JWT identity providers' },
  { field: 'loginTexts', type: 'login_texts', id: byLang, what: 'custom login texts' },
  { field: 'actions', type: 'action', id: (_o, e) => str(e.actionId), what: 'actions' },
  { field: 'triggerActions', type: 'trigger_action', id: (_o, e) => `${str(e.flowType)}_${str(e.triggerType)}`, what: 'actions' },
  {
    field: 'projectGrants',
    type: 'project_grant',
    id: (o, e) => `${o}_${str((e.projectGrant as Record<string, unknown> | undefined)?.projectId)}_${str((e.projectGrant as Record<string, unknown> | undefined)?.grantedOrgId)}`,
    what: 'project grants',
  },
  { field: 'projectGrantMembers', type: 'project_grant_member', id: (o, e) => `${o}_${str(e.projectId)}_${str(e.grantId)}_${str(e.userId)}`, what: 'project grants' },
];
