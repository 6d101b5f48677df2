import { presentedClient, type PresentedClient } from '../protocol/presented-credentials.js';
import { OAuthError } from '../protocol/errors.js';
import { parseFormBody, type Form } from '../protocol/form.js';
import type { Request } from './types.js';

/**
 * The form and the presented client credentials of a POST to a client-authenticated OAuth
 * endpoint (token, introspection, revocation): one Authorization header at most, a strict form.
 */
export function readClientRequest(req: Request): { form: Form; presented: PresentedClient } {
  if (req.repeatedHeaders.has('authorization')) throw new OAuthError('invalid_request', 'Authorization header is repeated');
  const form = parseFormBody(req.headers['content-type'], req.body);
  return { form, presented: presentedClient(req.headers.authorization, form) };
}
