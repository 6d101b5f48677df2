import type { Editor } from '../model/activity.js';
import { notFound } from '../model/errors.js';
import type { StoresCopy } from '../actors/decided-again.js';
import type { Ports } from './ports.js';

export type MachineCredentialPorts = Pick<Ports, 'orgs' | 'clients' | 'transactions'>;

/**
 * A new client secret for a machine user; what the old secret obtained goes with it (the user's
 * revocation horizon), in the same commit: no copy of the directory (another thread's, another
 * node's) ever holds the new secret without the horizon (a token minted with it in between would
 * die when the horizon arrived), nor the horizon while the old secret still works.
 */
export function renewMachineSecret(ctx: MachineCredentialPorts, userId: string, by: Editor): Promise<string> {
  return ctx.transactions.decide(
    usersAndClients(ctx),
    (batch) => {
      ctx.orgs.stageTokenRevocation(userId, batch);
      return ctx.clients.stageMachineSecretRenewal(userId, batch);
    },
    by,
  );
}

/**
 * RemoveMachineKey: the key signs no assertion from then on, and what the user obtained before goes
 * with it (the revocation horizon, as for a new secret), in one commit: no copy of the directory
 * holds the horizon while the key still works, nor lacks the horizon once the key is gone.
 */
export function removeMachineKey(ctx: MachineCredentialPorts, userId: string, keyId: string, by: Editor): Promise<void> {
  return ctx.transactions.decide(
    usersAndClients(ctx),
    (batch) => {
      // Decided again on the newest copy after a conflict: of two removals at once, the second finds no key.
      const key = ctx.clients.getMachineKey(keyId);
      if (!key || key.userId !== userId) throw notFound('USER-K3y01', `key ${keyId} not found`);
      ctx.orgs.stageTokenRevocation(userId, batch);
      ctx.clients.stageMachineKeyRemoval(keyId, batch);
    },
    by,
  );
}

/** A decision over users and client credentials is taken again with either's newest rows. */
function usersAndClients(ctx: MachineCredentialPorts): StoresCopy {
  return { takeChange: (store, id) => ctx.orgs.takeChange(store, id) || ctx.clients.takeChange(store, id) };
}
