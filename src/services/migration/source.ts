import { isUtf8 } from 'node:buffer';
import { snakeToCamel, toCamel } from '../../zitadel/json.js';
import { invalidArgument } from '../../model/errors.js';
import { JsonScanner, JsonSyntaxError, type Span } from './json-scan.js';
import { v1DomainPolicy, v1LoginPolicy, v1TriggerAction } from '../../zitadel/v1.js';

/**
 * An import bundle read lazily from its bytes: the whole document is checked once (UTF-8 and JSON
 * syntax), then each organization's fields are parsed as they are needed and each list element on
 * its own. Peak memory stays near the size of the bytes plus one element, not a full object graph.
 */
const MAX_DEPTH = 32;

/**
 * toCamel for a freshly parsed value this module owns: objects whose keys are already camelCase
 * (and hold no nulls) are kept instead of copied, which spares the garbage of a copy per element.
 */
export function camelInPlace(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return toCamel(value, depth);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = camelInPlace(value[i], depth + 1);
    return value;
  }
  const obj = value as Record<string, unknown>;
  for (const key in obj) {
    if (key.includes('_') || obj[key] === null || key === '__proto__') return toCamel(obj, depth);
  }
  for (const key in obj) obj[key] = camelInPlace(obj[key], depth + 1);
  return obj;
}

/** Checks that `buf` is one UTF-8 JSON document; returns a scanner and the root span. 400 otherwise. */
export function scanDocument(buf: Buffer, what: string): { scanner: JsonScanner; root: Span } {
  if (!isUtf8(buf)) throw invalidArgument('IMPORT-J5on0', `${what} is not valid UTF-8`);
  const scanner = new JsonScanner(buf);
  try {
    return { scanner, root: scanner.document() };
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw invalidArgument('IMPORT-J5on1', `${what} is not valid JSON: ${error.message}`);
    throw error;
  }
}

/** The members of an object span with camelCase names (a camelCase name wins over its snake_case twin). */
export function camelMembers(scanner: JsonScanner, span: Span): Map<string, Span> {
  const out = new Map<string, Span>();
  const snake = new Set<string>();
  for (const { key, value } of scanner.members(span)) {
    if (key === '__proto__') continue;
    const name = snakeToCamel(key);
    const isSnake = name !== key;
    if (isSnake && out.has(name) && !snake.has(name)) continue;
    out.set(name, value);
    if (isSnake) snake.add(name);
    else snake.delete(name);
  }
  return out;
}

/** A list field that is not a list: reported once for the whole field. */
export class NotAList extends Error {}

export class OrgSource {
  private readonly fields: Map<string, Span>;

  constructor(
    private readonly scanner: JsonScanner,
    span: Span,
    readonly v1: boolean,
  ) {
    this.fields = camelMembers(scanner, span);
    // v1's iamPolicy is the current domainPolicy.
    const iamPolicy = this.fields.get('iamPolicy');
    if (v1 && iamPolicy) this.fields.set('domainPolicy', iamPolicy);
  }

  has(field: string): boolean {
    const span = this.fields.get(field);
    return span !== undefined && this.scanner.kind(span) !== 'null';
  }

  /** A field's value, camelCased; undefined when absent or null. */
  value(field: string): unknown {
    const span = this.fields.get(field);
    if (!span) return undefined;
    const raw = camelInPlace(this.scanner.parse(span));
    if (raw === null || raw === undefined) return undefined;
    if (!this.v1) return raw;
    if (field === 'domainPolicy') return v1DomainPolicy(raw);
    if (field === 'loginPolicy') return v1LoginPolicy(raw, this.value('secondFactors'), this.value('multiFactors'), this.value('idps'));
    return raw;
  }

  /** The element spans of a list field ([] when absent or null); NotAList when it is something else. */
  list(field: string): Span[] {
    const span = this.fields.get(field);
    if (!span) return [];
    const kind = this.scanner.kind(span);
    if (kind === 'null') return [];
    if (kind !== 'array') throw new NotAList(`${field} must be a list, not ${kind === 'object' ? 'an object' : `a ${kind}`}`);
    return [...this.scanner.elements(span)];
  }

  /** One list element, camelCased (and converted from v1 where the formats differ). */
  element(field: string, span: Span): unknown {
    const value = camelInPlace(this.scanner.parse(span));
    return this.v1 && field === 'triggerActions' ? v1TriggerAction(value) : value;
  }
}

/** `{"orgs":[…]}`: the organizations of a bundle. */
export function bundleOrgs(scanner: JsonScanner, span: Span, what: string, v1: boolean): OrgSource[] {
  if (scanner.kind(span) !== 'object') throw invalidArgument('IMPORT-B4nd1', `${what} must be an object {"orgs":[…]}`);
  const orgs = camelMembers(scanner, span).get('orgs');
  if (!orgs || scanner.kind(orgs) === 'null') return [];
  if (scanner.kind(orgs) !== 'array') throw invalidArgument('IMPORT-B4nd2', `${what}.orgs must be a list`);
  const out: OrgSource[] = [];
  let index = 0;
  for (const element of scanner.elements(orgs)) {
    if (scanner.kind(element) !== 'object') throw invalidArgument('IMPORT-B4nd3', `${what}.orgs[${index}] must be an object`);
    out.push(new OrgSource(scanner, element, v1));
    index++;
  }
  return out;
}
