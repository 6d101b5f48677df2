import { clock } from '../../util/clock.js';
import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { notFound, preconditionFailed } from '../../model/errors.js';
import type { MachineKeyRecord, PatRecord, UserRecord } from '../../model/records.js';
import type { Caller } from './caller.js';
import { addedDetails, changedDetails, listDetails, rfc3339, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok, okSecret } from './endpoint.js';
import { addKeySchema, keyView, listKeysSchema, machineKeyFile } from '../../zitadel/keys.js';
import { requireUserAccess } from './users.js';
import { expirationDate, readBody } from '../../zitadel/validation.js';
import type { CallerPorts } from './caller.js';
import type { View } from '../../util/readonly.js';
import { removeMachineKey, renewMachineSecret } from '../../services/machine-credentials.js';
import { pageOf } from '../../zitadel/list-query.js';

/** What this module uses of the wired parts (src/app.ts). */
export type MachineCredentialsPorts = Pick<Ports, 'clients' | 'orgs' | 'transactions'> & CallerPorts;

/**
 * What a machine user authenticates with: its client secret (GenerateMachineSecret), keys
 * (AddMachineKey, GetMachineKeyByIDs, ListMachineKeys, RemoveMachineKey) and personal access tokens (AddPersonalAccessToken,
 * GetPersonalAccessTokenByIDs, ListPersonalAccessTokens, RemovePersonalAccessToken). Secrets,
 * private keys and tokens appear only in the creating response.
 */
const addPatSchema = z.object({ expirationDate: expirationDate().optional() });

/** A machine user the caller may change: credentials hand out the user's roles (domain/permissions.ts missingToActOn). */
function requireMachine(caller: Caller, userId: string): View<UserRecord> {
  const user = caller.requireActOn(userId, 'user.write');
  if (!user.machine) throw preconditionFailed('USER-Mach1', `user ${userId} is not a machine user`);
  return user;
}

function requireMachineKey(ctx: MachineCredentialsPorts, user: View<UserRecord>, keyId: string): View<MachineKeyRecord> {
  const key = ctx.clients.getMachineKey(keyId);
  if (!key || key.userId !== user.id) throw notFound('USER-K3y01', `key ${keyId} not found`);
  return key;
}

function requirePat(ctx: MachineCredentialsPorts, user: View<UserRecord>, tokenId: string): PatRecord {
  const pat = ctx.orgs.getPat(tokenId);
  if (!pat || pat.userId !== user.id) throw notFound('USER-P4t01', `personal access token ${tokenId} not found`);
  return pat;
}

const patView = (pat: PatRecord) => ({ id: pat.id, details: viewDetails(pat, pat.orgId), expirationDate: rfc3339(pat.expirationDate) });

export function machineCredentialRoutes(ctx: MachineCredentialsPorts): Route[] {
  return [
    apiRoute(ctx, '/management/v1/users/:userId/secret', {
      PUT: async (req, caller) => {
        const user = requireMachine(caller, req.params[0]!);
        const clientSecret = await renewMachineSecret(ctx, user.id, caller.by);
        return okSecret({
          clientId: ctx.orgs.preferredLoginName(user),
          clientSecret,
          // The secret lives in the clients actor; the user record stands in for its change details.
          details: changedDetails({ ...user, changedAt: clock.now() }, user.orgId),
        });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/keys', {
      POST: async (req, caller) => {
        const user = requireMachine(caller, req.params[0]!);
        const input = readBody(req, addKeySchema);
        const { key, privateKeyPem } = await ctx.clients.by(caller.by).addMachineKey(user, {
          expirationDate: input.expirationDate,
          publicKeyPem: input.publicKey,
        });
        return okSecret({
          keyId: key.id,
          keyDetails: privateKeyPem ? machineKeyFile(key, privateKeyPem) : undefined,
          details: addedDetails(key, key.orgId),
        });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/keys/_search', {
      POST: (req, caller) => {
        const user = requireUserAccess(ctx, caller, req.params[0]!, 'user.read');
        const { query } = readBody(req, listKeysSchema);
        const keys = ctx.clients.machineKeysOf(user.id);
        return ok({ details: listDetails(keys.length), result: pageOf(keys, query).map(keyView) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/keys/:keyId', {
      GET: (req, caller) => {
        const user = requireUserAccess(ctx, caller, req.params[0]!, 'user.read');
        return ok({ key: keyView(requireMachineKey(ctx, user, req.params[1]!)) });
      },
      DELETE: async (req, caller) => {
        // Removing a credential needs the same right as creating one; what the key obtained dies with it.
        const user = requireMachine(caller, req.params[0]!);
        const key = requireMachineKey(ctx, user, req.params[1]!);
        await removeMachineKey(ctx, user.id, key.id, caller.by);
        return ok({ details: changedDetails({ ...key, changedAt: clock.now(), sequence: key.sequence + 1 }, key.orgId) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/pats', {
      POST: async (req, caller) => {
        const user = requireMachine(caller, req.params[0]!);
        const input = readBody(req, addPatSchema);
        const { pat, token } = await ctx.orgs.by(caller.by).addPat(user.id, input.expirationDate);
        return okSecret({ tokenId: pat.id, token, details: addedDetails(pat, pat.orgId) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/pats/_search', {
      POST: (req, caller) => {
        const user = requireUserAccess(ctx, caller, req.params[0]!, 'user.read');
        const pats = ctx.orgs.patsOf(user.id);
        return ok({ details: listDetails(pats.length), result: pats.map(patView) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/pats/:tokenId', {
      GET: (req, caller) => {
        const user = requireUserAccess(ctx, caller, req.params[0]!, 'user.read');
        return ok({ token: patView(requirePat(ctx, user, req.params[1]!)) });
      },
      DELETE: async (req, caller) => {
        // Removing a credential needs the same right as creating one (instance writers for admins).
        const user = requireMachine(caller, req.params[0]!);
        const pat = requirePat(ctx, user, req.params[1]!);
        await ctx.orgs.by(caller.by).removePat(pat.id);
        return ok({ details: changedDetails({ ...pat, changedAt: clock.now(), sequence: pat.sequence + 1 }, pat.orgId) });
      },
    }),
  ];
}
