import { z } from 'zod';
import { invalidArgument } from '../model/errors.js';
import { flag, text, uint64 } from './validation.js';

/** The most rows one page answers (ZITADEL's default maximum). */
export const MAX_LIST = 1000;
const DEFAULT_LIST = 100;

/**
 * ZITADEL's list requests (their bodies strict too: a misspelt `queries` would otherwise list everything): the `query` paging (`offset`, `limit`, `asc`) and the text queries'
 * match methods (`TEXT_QUERY_METHOD_*`), shared by ListUsers, ListOrgs, ListProjects and the auth
 * API's lists. A filter Sesame does not know is refused (the query objects are strict): a filter
 * dropped silently would answer more than the caller asked for.
 */
export const listQuerySchema = z
  .object({
    offset: uint64(),
    limit: z
      .number()
      .int()
      .min(0)
      .max(MAX_LIST, `at most ${MAX_LIST} results a page`)
      .default(0)
      .transform((n) => (n === 0 ? DEFAULT_LIST : n)),
    asc: flag(),
  })
  .strict()
  .default({ offset: 0, limit: DEFAULT_LIST, asc: false });

export type ListQuery = z.output<typeof listQuerySchema>;

export const TEXT_QUERY_METHODS = [
  'TEXT_QUERY_METHOD_EQUALS',
  'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE',
  'TEXT_QUERY_METHOD_STARTS_WITH',
  'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE',
  'TEXT_QUERY_METHOD_CONTAINS',
  'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE',
  'TEXT_QUERY_METHOD_ENDS_WITH',
  'TEXT_QUERY_METHOD_ENDS_WITH_IGNORE_CASE',
] as const;
export type TextQueryMethod = (typeof TEXT_QUERY_METHODS)[number];

/** A text query on one field: `{ <field>: "…", method: "TEXT_QUERY_METHOD_…" }` (EQUALS when unset). */
const methodField = z.enum(TEXT_QUERY_METHODS).default('TEXT_QUERY_METHOD_EQUALS');
export function textQuery<F extends string>(field: F) {
  return z.object({ [field]: text(200), method: methodField } as Record<F, ReturnType<typeof text>> & { method: typeof methodField }).strict();
}

/** Whether `value` matches `wanted` by a text query's method. */
export function textMatches(value: string, wanted: string, method: TextQueryMethod): boolean {
  const fold = method.endsWith('_IGNORE_CASE');
  const v = fold ? value.toLowerCase() : value;
  const w = fold ? wanted.toLowerCase() : wanted;
  if (method.startsWith('TEXT_QUERY_METHOD_EQUALS')) return v === w;
  if (method.startsWith('TEXT_QUERY_METHOD_STARTS_WITH')) return v.startsWith(w);
  if (method.startsWith('TEXT_QUERY_METHOD_ENDS_WITH')) return v.endsWith(w);
  return v.includes(w);
}

/**
 * One filter of a list's `queries`: an object with exactly one of the named queries. ZITADEL's
 * oneof; an object naming none or two is refused.
 */
export function oneQueryOf<S extends z.ZodRawShape>(shape: S) {
  return z
    .object(shape)
    .partial()
    .strict()
    .superRefine((query, ctx) => {
      const set = Object.values(query).filter((v) => v !== undefined).length;
      if (set !== 1) ctx.addIssue({ code: 'custom', message: `each query names exactly one of ${Object.keys(shape).join(', ')}` });
    });
}

/** The page `query` asks for, of rows already filtered and sorted ascending. */
export function pageOf<T>(rows: readonly T[], query: ListQuery): T[] {
  const ordered = query.asc ? rows : [...rows].reverse();
  if (query.offset > ordered.length) return [];
  return ordered.slice(query.offset, query.offset + query.limit);
}

/** A sorting column Sesame does not sort by: refused by name. */
export function unsupportedSorting(column: string, supported: readonly string[]): never {
  throw invalidArgument('LIST-s0rt1', `sortingColumn ${column} is not supported by Sesame (supported: ${supported.join(', ')})`);
}

/** Rows sorted ascending by a key, ties in their given (id) order. */
export function sortedBy<T>(rows: readonly T[], key: (row: T) => string | number): T[] {
  return rows
    .map((row, index) => ({ row, index, k: key(row) }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.index - b.index))
    .map((entry) => entry.row);
}
