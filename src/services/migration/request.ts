import { z } from 'zod';
import { describeIssues } from '../../zitadel/validation.js';
import { toCamel } from '../../zitadel/json.js';
import { ApiError, invalidArgument } from '../../model/errors.js';
import { parseDuration } from '../../util/duration.js';
import { gcsLocationSchema, parseServiceAccount, type GcsLocation } from './gcs.js';
import { JsonScanner, type Span } from './json-scan.js';
import { camelMembers, scanDocument } from './source.js';

/**
 * ImportDataRequest (docs/compatibility.md §1.2), read from a body of up to hundreds of megabytes without parsing
 * it whole: `timeout` (required Go duration), and exactly one data source: `dataOrgs` or
 * `dataOrgsv1` inline, or `dataOrgsGcs` / `dataOrgsv1Gcs` in cloud object storage. snake_case
 * names are accepted, unknown fields ignored. Sesame's own `addToExistingOrgs` (ZITADEL's request
 * has no such field) lets the bundle add to organizations that exist; without it they are refused.
 * Sesame's `idpIdMap` renames identity provider ids of the bundle (ZITADEL exports no instance
 * providers: links to them are imported to the providers the target has under other ids).
 */
export type ImportData = { kind: 'inline'; v1: boolean; field: string; scanner: JsonScanner; span: Span } | { kind: 'gcs'; v1: boolean; field: string; location: GcsLocation };

export interface ImportRequest {
  timeoutMs: number;
  data: ImportData;
  /** Orgs of the bundle that exist already are added to (reported), not refused. */
  addToExistingOrgs: boolean;
  /** Sesame's `idpIdMap`: identity provider ids of the bundle → the target's (links and login policies follow it). */
  idpIdMap: Record<string, string>;
}

const idpIdMapSchema = z.record(z.string().min(1).max(200), z.string().min(1).max(200)).refine((m) => Object.keys(m).length <= 1000, 'at most 1000 entries');

const SOURCES: Record<string, { kind: 'inline' | 'gcs' | 'unsupported'; v1: boolean }> = {
  dataOrgs: { kind: 'inline', v1: false },
  dataOrgsv1: { kind: 'inline', v1: true },
  dataOrgsGcs: { kind: 'gcs', v1: false },
  dataOrgsv1Gcs: { kind: 'gcs', v1: true },
  dataOrgsLocal: { kind: 'unsupported', v1: false },
  dataOrgsv1Local: { kind: 'unsupported', v1: true },
  dataOrgsS3: { kind: 'unsupported', v1: false },
  dataOrgsv1S3: { kind: 'unsupported', v1: true },
};

/** A Go duration string (`30m`, `1m30s`, `30m0s`) as milliseconds; 400 when missing or malformed. */
export function parseTimeout(value: unknown, required: boolean): number | undefined {
  if (value === undefined || value === null || value === '') {
    if (!required) return undefined;
    throw invalidArgument('IMPORT-T1me1', 'timeout is required: a duration such as "30m" or "1m30s"');
  }
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined) throw invalidArgument('IMPORT-T1me2', `timeout ${JSON.stringify(value)} is not a duration such as "30m" or "1m30s"`);
  return ms;
}

export function gcsLocation(value: unknown, field: string): GcsLocation {
  const result = gcsLocationSchema.safeParse(toCamel(value));
  if (!result.success) {
    throw invalidArgument('IMPORT-Gcs01', `invalid ${field}: ${describeIssues(result.error.issues, field, 3)}`);
  }
  parseServiceAccount(result.data.serviceaccountJson);
  return result.data;
}

export function parseImportRequest(body: Buffer): ImportRequest {
  if (new JsonScanner(body).skipWs(0) >= body.length) {
    throw invalidArgument('IMPORT-Empt1', 'the request body is empty: send {"timeout":"30m","dataOrgs":{"orgs":[…]}}');
  }
  const { scanner, root } = scanDocument(body, 'request body');
  if (scanner.kind(root) !== 'object') throw invalidArgument('IMPORT-B0dy1', 'request body must be a JSON object');
  const fields = camelMembers(scanner, root);
  const parse = (name: string) => {
    const span = fields.get(name);
    return span ? scanner.parse(span) : undefined;
  };
  const timeoutMs = parseTimeout(parse('timeout'), true)!;
  const addToExisting = parse('addToExistingOrgs') ?? false;
  if (typeof addToExisting !== 'boolean') throw invalidArgument('IMPORT-Add01', 'addToExistingOrgs must be true or false');
  const map = idpIdMapSchema.safeParse(parse('idpIdMap') ?? {});
  if (!map.success) throw invalidArgument('IMPORT-1dpM1', `idpIdMap must map identity provider ids of the bundle to the target's: ${describeIssues(map.error.issues, 'idpIdMap', 3)}`);
  const idpIdMap = map.data;

  const present = Object.keys(SOURCES).filter((name) => {
    const span = fields.get(name);
    return span !== undefined && scanner.kind(span) !== 'null';
  });
  if (present.length === 0) {
    throw invalidArgument('IMPORT-D4ta1', 'one of dataOrgs, dataOrgsv1, dataOrgsGcs or dataOrgsv1Gcs is required');
  }
  if (present.length > 1) throw invalidArgument('IMPORT-D4ta2', `only one data source may be sent, not ${present.join(' and ')}`);
  const field = present[0]!;
  const source = SOURCES[field]!;
  if (source.kind === 'unsupported') {
    throw new ApiError('Unimplemented', 'IMPORT-D4ta3', `${field} is not supported: Sesame imports bundles inline (dataOrgs, dataOrgsv1) or from cloud object storage (dataOrgsGcs, dataOrgsv1Gcs)`);
  }
  const span = fields.get(field)!;
  if (source.kind === 'gcs') {
    if (scanner.kind(span) !== 'object') throw invalidArgument('IMPORT-Gcs00', `${field} must be an object {"bucket","path","serviceaccountJson"}`);
    return { timeoutMs, addToExistingOrgs: addToExisting, idpIdMap, data: { kind: 'gcs', v1: source.v1, field, location: gcsLocation(scanner.parse(span), field) } };
  }
  return { timeoutMs, addToExistingOrgs: addToExisting, idpIdMap, data: { kind: 'inline', v1: source.v1, field, scanner, span } };
}

/** ExportDataRequest (docs/compatibility.md §1.1, every option implemented). */
export const exportRequestSchema = z.object({
  orgIds: z.array(z.string()).default([]),
  excludedOrgIds: z.array(z.string()).default([]),
  withPasswords: z.boolean().default(false),
  withOtp: z.boolean().default(false),
  timeout: z.string().default(''),
  responseOutput: z.boolean().default(false),
  gcsOutput: z.unknown().optional(),
  localOutput: z.unknown().optional(),
  s3Output: z.unknown().optional(),
});
