import { invalidArgument } from '../model/errors.js';

/**
 * ZITADEL's REST gateway is protojson: input keys may be camelCase or proto (snake_case) names and
 * a `null` means "not set"; output omits every zero value. These helpers do both directions.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const MAX_DEPTH = 32;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** `client_id` → `clientId`: proto field names to their JSON names. */
export const snakeToCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Converts snake_case keys to camelCase, recursively, and drops `null` members (protojson reads
 * them as unset). When both spellings of a key are sent, the camelCase one wins.
 */
export function toCamel(input: unknown, depth = 0): unknown {
  // No request nests this deep; the limit keeps a hostile body from exhausting the stack.
  if (depth > MAX_DEPTH) throw invalidArgument('API-J5on3', `request body is nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(input)) return input.map((item) => toCamel(item, depth + 1));
  if (input === null || typeof input !== 'object') return input;
  const out: Record<string, unknown> = {};
  const entries = Object.entries(input as Record<string, unknown>);
  // Plain camelCase keys are written last so they override their snake_case twins.
  entries.sort(([a], [b]) => Number(b.includes('_')) - Number(a.includes('_')));
  for (const [key, value] of entries) {
    if (value === null || key === '__proto__') continue;
    out[snakeToCamel(key)] = toCamel(value, depth + 1);
  }
  return out;
}

function isZero(value: unknown): boolean {
  return value === undefined || value === null || value === false || value === 0 || value === '' || (Array.isArray(value) && value.length === 0);
}

/**
 * Removes zero-valued members (undefined, null, false, 0, "", []) recursively. Zero values inside
 * arrays stay, as protojson emits repeated fields element by element. Empty objects stay too: a
 * set message field is emitted even when all its fields are zero (`"loginV1": {}`). Zero enum
 * values are turned into undefined where responses are built (see enums.ts `nonZero`).
 */
export function omitZero<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => (v !== null && typeof v === 'object' ? omitZero(v) : v)) as T;
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    if (isZero(member)) continue;
    out[key] = member !== null && typeof member === 'object' ? omitZero(member) : member;
  }
  return out as T;
}

/**
 * Parses a request body as a JSON object with camelCase keys. An empty body is `{}` (every field
 * unset); anything that is not a JSON object is an InvalidArgument.
 */
export function parseJsonObject(body: Buffer): Record<string, unknown> {
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    // protojson refuses invalid UTF-8 instead of replacing it with U+FFFD.
    throw invalidArgument('API-J5on0', 'request body is not valid UTF-8');
  }
  if (text.trim().length === 0) return {};
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch (error) {
    throw invalidArgument('API-J5on1', `request body is not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidArgument('API-J5on2', 'request body must be a JSON object');
  }
  return toCamel(parsed) as Record<string, unknown>;
}
