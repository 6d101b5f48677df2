import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { notFound } from '../../model/errors.js';
import { changedDetails, listDetails, viewDetails } from '../../zitadel/details.js';
import { listQuerySchema, oneQueryOf, pageOf, textMatches, textQuery } from '../../zitadel/list-query.js';
import { apiRoute, ok } from './endpoint.js';
import { requireUserAccess } from './users.js';
import { bytes, list, pathSegment, readBody, validate } from '../../zitadel/validation.js';
import type { UsersPorts } from './users.js';
import type { CallerPorts } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UserMetadataPorts = Pick<Ports, 'orgs'> & UsersPorts & CallerPorts;

/** User metadata values are bytes (base64 on the wire), up to this many. */
const MAX_VALUE_BYTES = 500_000;

const metadataKey = pathSegment();
const setMetadataSchema = z.object({
  value: bytes().refine((v) => v.length >= 1 && v.length <= MAX_VALUE_BYTES, `must hold 1-${MAX_VALUE_BYTES} bytes`),
});

/** ListUserMetadata's filters: the key, by a text query. */
const listMetadataSchema = z
  .object({
    query: listQuerySchema,
    queries: list(oneQueryOf({ keyQuery: textQuery('key') })).refine((q) => q.length <= 20, 'at most 20 queries'),
  })
  .strict();

/** User metadata: SetUserMetadata, GetUserMetadata, ListUserMetadata and RemoveUserMetadata. */
export function userMetadataRoutes(ctx: UserMetadataPorts): Route[] {
  return [
    apiRoute(ctx, '/management/v1/users/:userId/metadata/_search', {
      POST: (req, caller) => {
        const user = requireUserAccess(ctx, caller, req.params[0]!, 'user.read');
        const input = readBody(req, listMetadataSchema);
        const entries = Object.entries(user.metadata ?? {})
          .filter(([key]) => input.queries.every((q) => textMatches(key, q.keyQuery!.key, q.keyQuery!.method)))
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        const result = pageOf(entries, input.query).map(([key, value]) => ({ details: viewDetails(user, user.orgId), key, value: Buffer.from(value).toString('base64') }));
        return ok({ details: listDetails(entries.length), result });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/metadata/:key', {
      POST: async (req, caller) => {
        const user = caller.requireActOn(req.params[0]!, 'user.write');
        const key = validate(z.object({ key: metadataKey }), { key: req.params[1] }).key;
        const { value } = readBody(req, setMetadataSchema);
        const updated = await ctx.orgs.by(caller.by).setUserMetadata(user.id, key, new Uint8Array(value));
        return ok({ details: changedDetails(updated, updated.orgId) });
      },
      GET: (req, caller) => {
        const user = requireUserAccess(ctx, caller, req.params[0]!, 'user.read');
        const key = req.params[1]!;
        const value = user.metadata && Object.hasOwn(user.metadata, key) ? user.metadata[key] : undefined;
        if (!value) throw notFound('USER-M3t41', `metadata ${key} not found`);
        return ok({ metadata: { details: viewDetails(user, user.orgId), key, value: Buffer.from(value).toString('base64') } });
      },
      DELETE: async (req, caller) => {
        const user = caller.requireActOn(req.params[0]!, 'user.write');
        // The key exactly as stored (one set before keys were checked, `..` too, can still go).
        const updated = await ctx.orgs.by(caller.by).removeUserMetadata(user.id, req.params[1]!);
        return ok({ details: changedDetails(updated, updated.orgId) });
      },
    }),
  ];
}
