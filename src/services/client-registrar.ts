/** The JSON body a registration endpoint answers with. */
export interface RegistrationAnswer {
  body: Record<string, unknown>;
}

/**
 * What the registration endpoints (RFC 7591/7592) ask of the directory's writer: the main thread's
 * ClientRegistrations (src/services/client-registration.ts); an acceptor thread asks through
 * src/threads/relayed-client-registrations.ts. Each call is one decision on the apps, so concurrent
 * registrations on every thread count against one quota. Bodies travel as the JSON text the
 * client sent (parsed by the writer: a hostile nesting never goes through a structured clone).
 */
export interface ClientRegistrar {
  register(json: string, registrant: { anonymous: boolean }): Promise<RegistrationAnswer>;
  read(clientId: string, token: string | undefined): Promise<RegistrationAnswer>;
  update(clientId: string, token: string | undefined, json: string): Promise<RegistrationAnswer>;
  remove(clientId: string, token: string | undefined): Promise<void>;
}
