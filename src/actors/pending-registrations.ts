import { recordKind, type StorePort } from '../storage/store-port.js';
import { clock } from '../util/clock.js';

/**
 * Security keys registered through the auth API (AddMyAuthFactorU2F, then VerifyMyAuthFactorU2F):
 * the challenge the first call handed out waits in the store, one per person (a second start
 * replaces it), so the answer may reach any thread or node; the answer takes it once, within
 * REGISTRATION_MS. At most one record per person exists, so none needs sweeping.
 */
interface PendingRegistration {
  challenge: string;
  until: number;
}

/** As long as the browser's ceremony may take (its timeout), and a little more. */
export const REGISTRATION_MS = 6 * 60 * 1000;

const PENDING = recordKind<PendingRegistration>('webauthnRegistrations');

export class PendingRegistrationsActor {
  constructor(private readonly store: StorePort) {}

  /** The person's registration under way: this challenge, durably, before it is handed out. */
  async begin(userId: string, challenge: string): Promise<void> {
    await this.store.durable(this.store.put(PENDING, userId, { challenge, until: clock.now() + REGISTRATION_MS }));
  }

  /** The challenge to check the answer against, taken (used once); undefined when none waits or it expired. */
  async take(userId: string): Promise<string | undefined> {
    const taken = await this.store.takeOnce(PENDING, userId);
    return taken && taken.until >= clock.now() ? taken.challenge : undefined;
  }
}
