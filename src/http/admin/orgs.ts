import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { OrgRecord } from '../../model/records.js';
import { addedDetails, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { readBody, requiredText } from '../../zitadel/validation.js';
import type { CallerPorts } from './caller.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type OrgsPorts = Pick<Ports, 'orgs'> & CallerPorts;

/** Organizations: AddOrg, GetMyOrg, and the admin API's GetOrgByID. */
const addOrgSchema = z.object({ name: requiredText(200) });

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
    apiRoute(ctx, '/admin/v1/orgs/:orgId', {
      GET: (req, caller) => {
        caller.require('iam.read', {});
        return ok({ org: orgView(ctx, ctx.orgs.requireOrg(req.params[0]!)) });
      },
    }),
  ];
}
