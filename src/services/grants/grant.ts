import type { AppContext } from '../ports.js';
import type { AuthenticatedClient, ClientPolicy } from '../client-auth.js';
import type { Form } from '../../protocol/form.js';

/**
 * One token-endpoint grant type. The token route parses the form, authenticates the client with
 * the grant's policy (unless the grant authenticates itself, as the JWT profile grant does) and
 * hands both to `handle`, whose result is the JSON token response.
 */
export interface GrantInput {
  form: Form;
  /** The authenticated client; absent only for grants with `clientPolicy: undefined`. */
  client: AuthenticatedClient | undefined;
  ctx: AppContext;
}

export interface Grant {
  readonly type: string;
  readonly clientPolicy: ClientPolicy | undefined;
  handle(input: GrantInput): Promise<Record<string, unknown>>;
}
