import { OAuthError } from './errors.js';

import type { Prompt } from '../model/authorization.js';

export type { Prompt };
const KNOWN: ReadonlySet<string> = new Set(['none', 'login', 'select_account', 'create', 'consent']);

/** The `prompt` parameter (OIDC Core §3.1.2.1, OIDC Prompt Create): a set; `none` stands alone. */
export function parsePrompt(value: string | undefined): Set<Prompt> {
  const prompts = new Set<Prompt>();
  if (value === undefined) return prompts;
  for (const p of value.split(' ').filter((s) => s.length > 0)) {
    if (!KNOWN.has(p)) throw new OAuthError('invalid_request', `unsupported prompt value ${p}`);
    prompts.add(p as Prompt);
  }
  if (prompts.has('none') && prompts.size > 1) throw new OAuthError('invalid_request', 'prompt none must not be combined with other values');
  return prompts;
}

/** max_age: a non-negative integer number of seconds; `prompt=login` means max_age 0. */
export function parseMaxAge(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value)) throw new OAuthError('invalid_request', 'max_age must be a non-negative integer');
  return Number(value);
}
