import { recordKind, type StorePort } from '../storage/store-port.js';

/**
 * What people allowed self-registered clients (dynamic registration, where anyone may have made
 * the client): per person and client, the scopes and resources they consented to. A client asking
 * for no more than that is not asked about again. Read from the store by every thread; a consent is
 * answered once durable, before the sign-in it belongs to goes on.
 */
export interface Consent {
  /** `<user id>\n<client id>` */
  id: string;
  scopes: string[];
  resources: string[];
}

const keyOf = (userId: string, clientId: string) => `${userId}\n${clientId}`;

const CONSENTS = recordKind<Consent>('consents');

export class ConsentsActor {
  constructor(private readonly store: StorePort) {}

  /** Whether the person allowed the client every one of these scopes and resources. */
  async covers(userId: string, clientId: string, scopes: readonly string[], resources: readonly string[]): Promise<boolean> {
    const consent = await this.store.get(CONSENTS, keyOf(userId, clientId));
    return consent !== undefined && scopes.every((s) => consent.scopes.includes(s)) && resources.every((r) => consent.resources.includes(r));
  }

  /** Records that the person allowed these (added to what they allowed before, on any thread); resolves once durable. */
  async allow(userId: string, clientId: string, scopes: readonly string[], resources: readonly string[]): Promise<void> {
    const id = keyOf(userId, clientId);
    await this.store.durable(
      this.store.update(CONSENTS, id, (previous) => ({
        id,
        scopes: [...new Set([...(previous?.scopes ?? []), ...scopes])],
        resources: [...new Set([...(previous?.resources ?? []), ...resources])],
      })),
    );
  }
}
