import { z } from 'zod';
import { invalidArgument } from '../model/errors.js';
import { parseDuration } from '../util/duration.js';
import { parseJsonObject } from './json.js';
import { clock } from '../util/clock.js';

/** The first few problems zod found, as one readable line (`path: message`, `path is required`). */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root = 'body', max = 5): string {
  return issues
    .slice(0, max)
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.map(String).join('.') : root;
      if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) return `${path} is required`;
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

/**
 * Request validation: a value checked with a zod schema (every body is parsed as a JSON object,
 * camelCased: readBody); the first problems become one InvalidArgument naming the fields.
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw invalidArgument('API-V4l1d', `invalid request: ${describeIssues(result.error.issues)}`);
}

/** The request body, validated. */
export function readBody<S extends z.ZodType>(req: { readonly body: Buffer }, schema: S): z.output<S> {
  return validate(schema, parseJsonObject(req.body));
}

/** A string field; protobuf leaves an unset string empty. */
export const text = (max: number) => z.string().max(max).default('');
/** A string field that must be set. */
export const requiredText = (max: number) => z.string().trim().min(1, 'must not be empty').max(max);

/**
 * An id or key a caller chooses that becomes one segment of a URL path (an imported user's or
 * key's id, a metadata key): `.` and `..` are refused, since a browser or HTTP client resolves them
 * (percent-encoded too) and would aim a request meant for the object at its parent.
 */
export const pathSegment = (max = 200) => requiredText(max).refine((v) => v !== '.' && v !== '..', 'must not be "." or ".."');
export const flag = () => z.boolean().default(false);
/** uint64 in protojson: a JSON string (a number is accepted too), at most 19 digits; unset is 0. */
export const uint64 = () =>
  z
    .union([z.number().int().min(0), z.string().regex(/^\d{1,19}$/, 'must be an unsigned integer')])
    .default(0)
    .transform((v) => Number(v));
export const list = <T extends z.ZodType>(item: T) => z.array(item).default([]);

/**
 * True for a browser origin `scheme://host[:port]` as browsers send it in `Origin` (no path, query,
 * user info; lowercase host; no default port). Its characters are limited too, since origins also
 * become CSP sources, where `;` or `,` would start another directive or policy.
 */
const ORIGIN_CHARS = /^[A-Za-z0-9+.\-:/[\]_]+$/;
function isOrigin(value: string): boolean {
  return ORIGIN_CHARS.test(value) && URL.canParse(value) && new URL(value).origin === value;
}

/** A list of origins; the first that is not one is an InvalidArgument naming the field. */
export function checkOrigins(field: string, origins: readonly string[]): void {
  for (const origin of origins) {
    if (!isOrigin(origin)) throw invalidArgument('API-0r1g1', `${field}: "${origin}" is not an origin (scheme://host[:port])`);
  }
}

/** protobuf Timestamp's upper bound (and ZITADEL's "never expires"). */
const MAX_TIMESTAMP = Date.parse('9999-12-31T23:59:59.999Z');

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** A protobuf Timestamp (RFC 3339) as epoch milliseconds. */
export const timestamp = () =>
  z.string().transform((value, ctx) => {
    const match = RFC3339.exec(value);
    // Date.parse takes at most millisecond precision; nanosecond digits beyond that are dropped.
    const ms = match ? Date.parse(`${match[1]}T${match[2]}${(match[3] ?? '').slice(0, 4)}${match[4]!.toUpperCase()}`) : NaN;
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: 'not an RFC 3339 timestamp' });
      return z.NEVER;
    }
    return ms;
  });

/** An expiration date: an RFC 3339 timestamp in the future. */
export const expirationDate = () =>
  timestamp()
    .refine((ms) => ms > clock.now(), 'must be in the future')
    .refine((ms) => ms <= MAX_TIMESTAMP, 'must not be after 9999-12-31T23:59:59Z');

/** A protobuf Duration (`"1.5s"`; Go-style `"500ms"` is accepted too) as milliseconds. */
export const duration = () =>
  z.string().transform((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: 'not a duration such as "1.5s"' });
      return z.NEVER;
    }
    return ms;
  });

const BASE64 = /^(?:[A-Za-z0-9+/]*|[A-Za-z0-9_-]*)={0,2}$/;

/** protobuf `bytes`: standard base64 (URL-safe and unpadded accepted, as protojson does). */
export const bytes = () =>
  z.string().transform((value, ctx) => {
    const trimmed = value.replace(/\s+/g, '');
    if (!BASE64.test(trimmed)) {
      ctx.addIssue({ code: 'custom', message: 'not base64' });
      return z.NEVER;
    }
    return Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64');
  });
