import type { Editor } from '../model/activity.js';

/** The JSON body a registration endpoint answers with. */
export interface RegistrationAnswer {
  body: Record<string, unknown>;
}

/**
 * What the registration endpoints (RFC 7591/7592) ask of: ClientRegistrations
 * (src/services/client-registration.ts), on every thread. Each registration takes one of the
 * project's places in the store, so registrations on every thread at once count against one
 * quota. Bodies come as the JSON text the client sent, parsed there.
 */
export interface ClientRegistrar {
  /** `registrant.by`: who registers (the initial access token's user, or nobody known, from an address), for the activity log. */
  register(json: string, registrant: { anonymous: boolean; by: Editor }): Promise<RegistrationAnswer>;
  read(clientId: string, token: string | undefined): Promise<RegistrationAnswer>;
  /** `by`: the holder of the registration access token, from an address (the activity log's editor). */
  update(clientId: string, token: string | undefined, json: string, by: Editor): Promise<RegistrationAnswer>;
  remove(clientId: string, token: string | undefined, by: Editor): Promise<void>;
}
