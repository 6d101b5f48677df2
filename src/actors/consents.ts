import type { Storage } from '../storage/db.js';
import { Table } from '../storage/table.js';

/**
 * Owns what people allowed self-registered clients (dynamic registration, where anyone may have
 * made the client): per person and client, the scopes and resources they consented to. A client
 * asking for no more than that is not asked about again. A consent is visible at once and durable
 * before the sign-in it belongs to goes on (Table: a failed write takes it back).
 */
export interface Consent {
  /** `<user id>\n<client id>` */
  id: string;
  scopes: string[];
  resources: string[];
}

const keyOf = (userId: string, clientId: string) => `${userId}\n${clientId}`;

export class ConsentsActor {
  private readonly consents: Table<Consent>;

  constructor(storage: Storage) {
    this.consents = new Table(storage.stores.consents, storage.durable);
  }

  /** Whether the person allowed the client every one of these scopes and resources. */
  covers(userId: string, clientId: string, scopes: readonly string[], resources: readonly string[]): boolean {
    const consent = this.consents.get(keyOf(userId, clientId));
    return consent !== undefined && scopes.every((s) => consent.scopes.includes(s)) && resources.every((r) => consent.resources.includes(r));
  }

  /** Records that the person allowed these (added to what they allowed before); resolves once durable. */
  async allow(userId: string, clientId: string, scopes: readonly string[], resources: readonly string[]): Promise<void> {
    const id = keyOf(userId, clientId);
    const previous = this.consents.get(id);
    await this.consents.put({
      id,
      scopes: [...new Set([...(previous?.scopes ?? []), ...scopes])],
      resources: [...new Set([...(previous?.resources ?? []), ...resources])],
    });
  }
}
