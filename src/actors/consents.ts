import type { Storage } from '../storage/db.js';
import { clock } from '../util/clock.js';
import type { View } from '../util/readonly.js';

/**
 * Owns what people allowed self-registered clients (dynamic registration, where anyone may have
 * made the client): per person and client, the scopes and resources they consented to. A client
 * asking for no more than that is not asked about again. Each consent is in memory and durable
 * before the sign-in it belongs to goes on; a failed write takes it back.
 */
export interface Consent {
  scopes: string[];
  resources: string[];
  /** When it was last extended (ms). */
  at: number;
}

const keyOf = (userId: string, clientId: string) => `${userId}\n${clientId}`;

export class ConsentsActor {
  private readonly consents = new Map<string, Consent>();

  constructor(private readonly storage: Storage) {
    for (const { key, value } of storage.stores.consents.getRange()) this.consents.set(key, value as Consent);
  }

  /** The person's consent for the client, if any. */
  get(userId: string, clientId: string): View<Consent> | undefined {
    return this.consents.get(keyOf(userId, clientId));
  }

  /** Whether the person allowed the client every one of these scopes and resources. */
  covers(userId: string, clientId: string, scopes: readonly string[], resources: readonly string[]): boolean {
    const consent = this.consents.get(keyOf(userId, clientId));
    return consent !== undefined && scopes.every((s) => consent.scopes.includes(s)) && resources.every((r) => consent.resources.includes(r));
  }

  /** Records that the person allowed these (added to what they allowed before); resolves once durable. */
  async allow(userId: string, clientId: string, scopes: readonly string[], resources: readonly string[]): Promise<void> {
    const key = keyOf(userId, clientId);
    const previous = this.consents.get(key);
    const next: Consent = {
      scopes: [...new Set([...(previous?.scopes ?? []), ...scopes])],
      resources: [...new Set([...(previous?.resources ?? []), ...resources])],
      at: clock.now(),
    };
    this.consents.set(key, next);
    try {
      await this.storage.durable(this.storage.stores.consents.put(key, next));
    } catch (error) {
      if (this.consents.get(key) === next) {
        if (previous) this.consents.set(key, previous);
        else this.consents.delete(key);
      }
      throw error;
    }
  }
}
