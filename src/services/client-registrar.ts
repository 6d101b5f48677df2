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
  register(json: string, registrant: { anonymous: boolean }): Promise<RegistrationAnswer>;
  read(clientId: string, token: string | undefined): Promise<RegistrationAnswer>;
  update(clientId: string, token: string | undefined, json: string): Promise<RegistrationAnswer>;
  remove(clientId: string, token: string | undefined): Promise<void>;
}
