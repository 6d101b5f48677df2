import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { OrgRecord } from '../../model/records.js';
import { addedDetails, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { list, readBody, requiredText } from '../../zitadel/validation.js';
import { listDetails } from '../../zitadel/details.js';
import { listQuerySchema, oneQueryOf, pageOf, sortedBy, textMatches, textQuery, unsupportedSorting } from '../../zitadel/list-query.js';
import type { Caller } from './caller.js';
import type { CallerPorts } from './caller.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type OrgsPorts = Pick<Ports, 'orgs'> & CallerPorts;

/** Organizations: AddOrg, GetMyOrg, and the admin API's GetOrgByID. */
const addOrgSchema = z.object({ name: requiredText(200) });

const orgQuerySchema = oneQueryOf({
  nameQuery: textQuery('name'),
  domainQuery: textQuery('domain'),
  stateQuery: z.object({ state: z.enum(['ORG_STATE_ACTIVE', 'ORG_STATE_INACTIVE']) }).strict(),
  idQuery: z.object({ id: z.string().max(200) }).strict(),
});
const ORG_SORTING = ['ORG_FIELD_NAME_UNSPECIFIED', 'ORG_FIELD_NAME_NAME'] as const;

/** ListOrgs (admin API) and ListMyProjectOrgs (auth API): `{query, sortingColumn, queries}`. */
const listOrgsSchema = z
  .object({
    query: listQuerySchema,
    sortingColumn: z.string().default('ORG_FIELD_NAME_UNSPECIFIED'),
    queries: list(orgQuerySchema).refine((queries) => queries.length <= 20, 'at most 20 queries'),
  })
  .strict();

function orgMatches(org: View<OrgRecord>, query: z.output<typeof orgQuerySchema>): boolean {
  if (query.nameQuery) return textMatches(org.name, query.nameQuery.name, query.nameQuery.method);
  if (query.domainQuery) return org.domains.some((d) => textMatches(d.domainName, query.domainQuery!.domain, query.domainQuery!.method));
  if (query.stateQuery) return org.state === query.stateQuery.state;
  return org.id === query.idQuery!.id;
}

/** The orgs a list answers: those `visible` lets through, filtered, sorted and paged. */
function listOrgs(ctx: OrgsPorts, req: Parameters<typeof readBody>[0], visible: (org: View<OrgRecord>) => boolean) {
  const input = readBody(req, listOrgsSchema);
  if (!(ORG_SORTING as readonly string[]).includes(input.sortingColumn)) unsupportedSorting(input.sortingColumn, ORG_SORTING);
  const matching = ctx.orgs.listOrgs().filter((org) => visible(org) && input.queries.every((query) => orgMatches(org, query)));
  const sorted = input.sortingColumn === 'ORG_FIELD_NAME_NAME' ? sortedBy(matching, (org) => org.name.toLowerCase()) : sortedBy(matching, (org) => org.createdAt);
  return ok({ details: listDetails(sorted.length), sortingColumn: input.sortingColumn, result: pageOf(sorted, input.query).map((org) => orgView(ctx, org)) });
}

/** The orgs a caller may read: every org with an instance role, else those of its org memberships, and its own. */
function readableOrg(caller: Caller): (org: View<OrgRecord>) => boolean {
  return (org) => org.id === caller.user.orgId || caller.can('org.read', { orgId: org.id });
}

function orgView(ctx: OrgsPorts, org: View<OrgRecord>) {
  return {
    id: org.id,
    details: viewDetails(org, org.id),
    state: org.state,
    name: org.name,
    primaryDomain: ctx.orgs.primaryDomain(org),
  };
}

export function orgRoutes(ctx: OrgsPorts): Route[] {
  return [
    apiRoute(ctx, '/management/v1/orgs', {
      POST: async (req, caller) => {
        caller.require('org.create', {});
        const { name } = readBody(req, addOrgSchema);
        const org = await ctx.orgs.by(caller.by).addOrg({ name });
        // As in ZITADEL, whoever creates an org owns it.
        await ctx.orgs.by(caller.by).addMember(`org:${org.id}`, caller.user.id, ['ORG_OWNER']);
        return ok({ id: org.id, details: addedDetails(org, org.id) });
      },
    }),
    apiRoute(ctx, '/management/v1/orgs/me', {
      GET: (_req, caller) => {
        caller.require('org.read');
        return ok({ org: orgView(ctx, ctx.orgs.requireOrg(caller.orgId)) });
      },
    }),
    // ListOrgs: every org, for the instance's administrators.
    apiRoute(ctx, '/admin/v1/orgs/_search', {
      POST: (req, caller) => {
        caller.require('iam.read', {});
        return listOrgs(ctx, req, () => true);
      },
    }),
    // ListMyProjectOrgs: the caller's org and those it may read (the console's org switcher), whoever calls.
    apiRoute(ctx, '/auth/v1/global/projectorgs/_search', {
      POST: (req, caller) => listOrgs(ctx, req, readableOrg(caller)),
    }),
    apiRoute(ctx, '/admin/v1/orgs/:orgId', {
      GET: (req, caller) => {
        caller.require('iam.read', {});
        return ok({ org: orgView(ctx, ctx.orgs.requireOrg(req.params[0]!)) });
      },
    }),
  ];
}
