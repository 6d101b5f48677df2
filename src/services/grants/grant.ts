import type { GrantLabel } from '../../observability/labels.js';
import type { AuthenticatedClient, ClientPolicy } from '../client-auth.js';
import type { Form } from '../../protocol/form.js';
import type { DpopKey } from '../../protocol/dpop.js';

/**
 * One token-endpoint grant type. The token route parses the form, authenticates the client with
 * the grant's policy (unless the grant authenticates itself, as the JWT profile grant does) and
 * hands both to `handle`, whose result is the JSON token response.
 */
export interface GrantInput<P> {
  form: Form;
  /** The authenticated client; absent only for grants with `clientPolicy: undefined`. */
  client: AuthenticatedClient | undefined;
  /** What the grant uses of the wired parts: its signature says what it may touch. */
  ctx: P;
  /** The key of the request's verified DPoP proof (RFC 9449): the tokens issued are bound to it. */
  dpop?: DpopKey | undefined;
}

export interface Grant<P> {
  readonly type: string;
  /** Its label in `sesame_tokens_issued_total`. */
  readonly label: GrantLabel;
  readonly clientPolicy: ClientPolicy | undefined;
  handle(input: GrantInput<P>): Promise<Record<string, unknown>>;
}
