import type { Editor } from '../model/activity.js';
import type { StoresCopy } from '../actors/decided-again.js';
import type { Ports } from './ports.js';

export type MachineSecretPorts = Pick<Ports, 'orgs' | 'clients' | 'transactions'>;

/**
 * A new client secret for a machine user; what the old secret obtained goes with it (the user's
 * revocation horizon), in the same commit: no copy of the directory (another thread's, another
 * node's) ever holds the new secret without the horizon (a token minted with it in between would
 * die when the horizon arrived), nor the horizon while the old secret still works.
 */
export function renewMachineSecret(ctx: MachineSecretPorts, userId: string, by: Editor): Promise<string> {
  const copy: StoresCopy = { takeChange: (store, id) => ctx.orgs.takeChange(store, id) || ctx.clients.takeChange(store, id) };
  return ctx.transactions.decide(
    copy,
    (batch) => {
      ctx.orgs.stageTokenRevocation(userId, batch);
      return ctx.clients.stageMachineSecretRenewal(userId, batch);
    },
    by,
  );
}
