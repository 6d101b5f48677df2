import type { ClientRegistrar, RegistrationAnswer } from '../services/client-registrar.js';
import type { AskWriter } from './protocol.js';

/**
 * An acceptor thread's ClientRegistrar: each registration decision (and the read, which answers
 * from the registered app as the writer has it) is the main thread's, the directory's writer, so
 * the project's quota of registered clients is counted in one place whichever thread registers.
 * The new app reaches this thread's copy of the directory from the change feed, before any request
 * that comes after the answer (the directory version moves before it is sent).
 */
export class RelayedClientRegistrations implements ClientRegistrar {
  constructor(private readonly ask: AskWriter) {}

  async register(json: string, registrant: { anonymous: boolean }): Promise<RegistrationAnswer> {
    return (await this.ask('registrations', 'register', [json, registrant])) as RegistrationAnswer;
  }

  async read(clientId: string, token: string | undefined): Promise<RegistrationAnswer> {
    return (await this.ask('registrations', 'read', [clientId, token])) as RegistrationAnswer;
  }

  async update(clientId: string, token: string | undefined, json: string): Promise<RegistrationAnswer> {
    return (await this.ask('registrations', 'update', [clientId, token, json])) as RegistrationAnswer;
  }

  async remove(clientId: string, token: string | undefined): Promise<void> {
    await this.ask('registrations', 'remove', [clientId, token]);
  }
}
