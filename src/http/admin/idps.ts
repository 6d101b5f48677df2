import { requireUserAccess } from './users.js';
import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { Caller, CallerPorts } from './caller.js';
import { apiRoute, ok, type CallerHandler } from './endpoint.js';
import { addedDetails, changedDetails, listDetails, rfc3339 } from '../../zitadel/details.js';
import { ADD_SCHEMAS, KIND_PATHS, KINDS_REFUSED, legacyOidcSchema, legacyOidcSettings, providerView, settingsOf, UPDATE_SCHEMAS } from '../../zitadel/idps.js';
import { readBody, text } from '../../zitadel/validation.js';
import { enumField } from '../../zitadel/enums.js';
import { IDP_OWNER_TYPES } from '../../zitadel/login-policy.js';
import { ownerTypeOf, type FoundProvider } from '../../actors/identity-providers.js';
import { INSTANCE_POLICY, type IdpKind, type LoginPolicy } from '../../model/records.js';
import { invalidArgument, notFound, preconditionFailed } from '../../model/errors.js';
import { endSessions, endSessionsOfUser, type SessionEndPorts } from '../../services/session-end.js';
import { clock } from '../../util/clock.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type IdpsPorts = Pick<Ports, 'orgs' | 'idps'> & SessionEndPorts & CallerPorts;

/**
 * Identity providers, ZITADEL's API: the templates of the instance (`/admin/v1/idps/…`) and of an
 * org (`/management/v1/idps/…`) per type, read, list, remove; the login policy's list of offered
 * providers (`…/policies/login/idps`); and people's links to accounts at them (management v1
 * `…/users/{id}/idps`, user v2 `…/users/{id}/links`). A provider decides who signs in as the
 * people it may be linked to (automatic linking by email, its links): writing one of an org, or the
 * org's list, takes the right to act on every administrator of the org, as its login policy does;
 * a link takes the right to act on the person.
 */
const policyIdpSchema = z.object({ idpId: z.string().trim().min(1, 'must not be empty').max(200), ownerType: enumField(IDP_OWNER_TYPES) });
const searchSchema = z
  .object({
    query: z
      .object({ offset: z.union([z.string(), z.number()]).optional(), limit: z.number().int().min(0).max(1000).optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();
const linkSchema = z.object({
  idpLink: z.object({ idpId: z.string().trim().min(1, 'must not be empty').max(200), userId: z.string().trim().min(1, 'must not be empty').max(200), userName: text(200) }),
});

/** ZITADEL's IDPType of the login policy's list (`IDP_TYPE_OIDC` for OIDC kinds, else unspecified) */
const idpTypeOf = (kind: IdpKind) => (['oidc', 'gitlab', 'gitlabSelfHosted', 'google', 'azure'].includes(kind) ? 'IDP_TYPE_OIDC' : 'IDP_TYPE_UNSPECIFIED');

/** A person's link to an account at a provider, as ListHumanLinkedIDPs (and ListMyLinkedIDPs) answer it. */
export function idpLinkView(ctx: Pick<IdpsPorts, 'idps'>, user: { id: string; orgId: string }, link: View<{ idpId: string; externalUserId: string; userName: string }>) {
  const found = ctx.idps.find(link.idpId, user.orgId);
  return {
    userId: user.id,
    idpId: link.idpId,
    idpName: found?.provider.name,
    providedUserId: link.externalUserId,
    providedUserName: link.userName,
    idpType: found ? idpTypeOf(found.provider.kind) : undefined,
  };
}

export function idpRoutes(ctx: IdpsPorts): Route[] {
  const prefixes = [
    { prefix: '/admin/v1', ownerOf: (_caller: Caller) => INSTANCE_POLICY },
    { prefix: '/management/v1', ownerOf: (caller: Caller) => caller.orgId },
  ];

  const requireRead = (caller: Caller, owner: string) => (owner === INSTANCE_POLICY ? caller.require('iam.idp.read', {}) : caller.require('org.idp.read'));
  const requireWrite = (caller: Caller, owner: string, action: 'write' | 'delete' = 'write') => {
    if (owner === INSTANCE_POLICY) return caller.require(`iam.idp.${action}`, {});
    caller.require(`org.idp.${action}`);
    // A provider of the org signs in its people: the right to act on each of them (its administrators included).
    caller.requireActOnPeopleOf(owner);
  };
  const ownerDetails = (owner: string) => owner || undefined;
  /**
   * Whether the writer vouches for the provider's addresses: an instance administrator (the
   * instance's providers, or an org's written by one) may name this machine and its network; an
   * org administrator's provider is reached at public addresses only (a change by one drops the trust).
   */
  const trusted = (caller: Caller, owner: string) => owner === INSTANCE_POLICY || caller.can('iam.idp.write', {});

  function templateRoutes(prefix: string, ownerOf: (caller: Caller) => string): Route[] {
    const routes: Route[] = [];
    for (const [kind, path] of Object.entries(KIND_PATHS) as [IdpKind, string][]) {
      routes.push(
        apiRoute(ctx, `${prefix}/idps/${path}`, {
          POST: async (req, caller) => {
            const owner = ownerOf(caller);
            requireWrite(caller, owner);
            const input = readBody(req, ADD_SCHEMAS[kind] as z.ZodType) as Record<string, unknown>;
            const provider = await ctx.idps.by(caller.by).add(owner, settingsOf(kind, input as never, trusted(caller, owner)), (input.clientSecret ?? input.bindPassword) as string);
            return ok({ id: provider.id, details: addedDetails(provider, ownerDetails(owner)) });
          },
        }),
        apiRoute(ctx, `${prefix}/idps/${path}/:id`, {
          PUT: async (req, caller) => {
            const owner = ownerOf(caller);
            requireWrite(caller, owner);
            const input = readBody(req, UPDATE_SCHEMAS[kind] as z.ZodType) as Record<string, unknown>;
            const settings = settingsOf(kind, input as never, trusted(caller, owner));
            const secret = (input.clientSecret ?? input.bindPassword) as string | undefined;
            const provider = await ctx.idps.by(caller.by).update(owner, req.params[0]!, kind, () => settings, secret);
            return ok({ details: changedDetails(provider, ownerDetails(owner)) });
          },
        }),
      );
    }
    // The legacy OIDC IdP (AddOIDCIDP): a generic OIDC provider.
    routes.push(
      apiRoute(ctx, `${prefix}/idps/oidc`, {
        POST: async (req, caller) => {
          const owner = ownerOf(caller);
          requireWrite(caller, owner);
          const input = readBody(req, legacyOidcSchema);
          if (!input.clientSecret) throw invalidArgument('IDP-s3cr1', 'clientSecret must not be empty');
          const { settings, unsupported } = legacyOidcSettings(input, trusted(caller, owner));
          if (unsupported.length > 0) throw invalidArgument('IDP-Uns1p', `not supported by Sesame: ${unsupported.join('; ')}`);
          const provider = await ctx.idps.by(caller.by).add(owner, settings, input.clientSecret);
          return ok({ idpId: provider.id, details: addedDetails(provider, ownerDetails(owner)) });
        },
      }),
    );
    for (const [path, reason] of Object.entries(KINDS_REFUSED)) {
      const refuse: CallerHandler = () => {
        throw invalidArgument('IDP-Uns1p', reason);
      };
      routes.push(apiRoute(ctx, `${prefix}/idps/${path}`, { POST: refuse }), apiRoute(ctx, `${prefix}/idps/${path}/:id`, { PUT: refuse }));
    }
    routes.push(
      apiRoute(ctx, `${prefix}/idps/templates/_search`, {
        POST: (req, caller) => {
          const owner = ownerOf(caller);
          requireRead(caller, owner);
          readBody(req, searchSchema);
          // An org sees its own providers and the instance's it may offer (ZITADEL's owner types).
          const found: FoundProvider[] = ctx.idps.of(owner).map((provider) => ({ provider, owner, ownerType: ownerTypeOf(owner) }));
          if (owner !== INSTANCE_POLICY) for (const provider of ctx.idps.of(INSTANCE_POLICY)) found.push({ provider, owner: INSTANCE_POLICY, ownerType: 'IDP_OWNER_TYPE_SYSTEM' });
          return ok({ details: listDetails(found.length), result: found.map(providerView) });
        },
      }),
      apiRoute(ctx, `${prefix}/idps/templates/:id`, {
        GET: (req, caller) => {
          const owner = ownerOf(caller);
          requireRead(caller, owner);
          const found = ctx.idps.find(req.params[0]!, owner);
          if (!found) throw notFound('IDP-0mnf2', `identity provider ${req.params[0]} not found (Errors.IDPConfig.NotExisting)`);
          return ok({ idp: providerView(found) });
        },
      }),
      apiRoute(ctx, `${prefix}/idps/:id`, {
        DELETE: async (req, caller) => {
          const owner = ownerOf(caller);
          requireWrite(caller, owner, 'delete');
          const idpId = req.params[0]!;
          const people = await ctx.idps.by(caller.by).remove(owner, idpId);
          // What the provider signed in dies with it: the sessions begun there, and their tokens.
          for (const userId of people)
            await endSessions(
              ctx,
              (await ctx.userSessions.ofUser(userId)).filter((session) => session.idpId === idpId),
            );
          return ok({ details: { sequence: '0', changeDate: rfc3339(clock.now()), resourceOwner: ownerDetails(owner) } });
        },
      }),
    );
    return routes;
  }

  /** The login policy's offered providers: the org's own policy (NotFound without one, as ZITADEL), or the instance default. */
  function loginPolicyIdpRoutes(prefix: string, ownerOf: (caller: Caller) => string): Route[] {
    const requirePolicyWrite = (caller: Caller, owner: string) => {
      if (owner === INSTANCE_POLICY) return caller.require('iam.policy.write', {});
      caller.require('policy.write');
      caller.requireActOnPeopleOf(owner);
    };
    const change = (caller: Caller, owner: string, next: (idps: NonNullable<LoginPolicy['idps']>) => NonNullable<LoginPolicy['idps']>) =>
      ctx.orgs.by(caller.by).setPolicy(
        'login',
        owner,
        (own) => {
          if (!own) {
            if (owner !== INSTANCE_POLICY) throw notFound('POLICY-3kd9f', 'the organization has no custom login policy (Errors.Org.LoginPolicy.NotFound)');
            return { ...ctx.orgs.policy('login', owner).policy, idps: next([]) } as LoginPolicy;
          }
          return { ...(own as LoginPolicy), idps: next([...(own.idps ?? [])]) };
        },
        'either',
      );
    return [
      apiRoute(ctx, `${prefix}/policies/login/idps`, {
        POST: async (req, caller) => {
          const owner = ownerOf(caller);
          requirePolicyWrite(caller, owner);
          const input = readBody(req, policyIdpSchema);
          if (input.ownerType === 'IDP_OWNER_TYPE_UNSPECIFIED') throw invalidArgument('POLICY-0wn3r', 'ownerType must be IDP_OWNER_TYPE_ORG or IDP_OWNER_TYPE_SYSTEM');
          const found = ctx.idps.find(input.idpId, owner);
          if (!found || found.ownerType !== input.ownerType) throw notFound('IDP-0mnf2', `identity provider ${input.idpId} not found as ${input.ownerType} (Errors.IDPConfig.NotExisting)`);
          const record = await change(caller, owner, (idps) => {
            if (idps.some((i) => i.idpId === input.idpId))
              throw preconditionFailed('POLICY-1d9x3', 'the identity provider is already in the login policy (Errors.Org.LoginPolicy.IdpProviderAlreadyExisting)');
            return [...idps, { idpId: input.idpId, ownerType: found.ownerType }];
          });
          return ok({ details: addedDetails(record, ownerDetails(owner)) });
        },
      }),
      apiRoute(ctx, `${prefix}/policies/login/idps/_search`, {
        POST: (_req, caller) => {
          const owner = ownerOf(caller);
          if (owner === INSTANCE_POLICY) caller.require('iam.policy.read', {});
          else caller.require('policy.read');
          const listed = ctx.orgs.policy('login', owner).policy.idps ?? [];
          const result = listed.flatMap((entry) => {
            const found = ctx.idps.find(entry.idpId, owner);
            return found ? [{ idpId: entry.idpId, idpName: found.provider.name, idpType: idpTypeOf(found.provider.kind) }] : [];
          });
          return ok({ details: listDetails(result.length), result });
        },
      }),
      apiRoute(ctx, `${prefix}/policies/login/idps/:idpId`, {
        DELETE: async (req, caller) => {
          const owner = ownerOf(caller);
          requirePolicyWrite(caller, owner);
          const record = await change(caller, owner, (idps) => {
            if (!idps.some((i) => i.idpId === req.params[0])) throw notFound('POLICY-3kd9f', 'the identity provider is not in the login policy (Errors.Org.LoginPolicy.IdpProviderNotExisting)');
            return idps.filter((i) => i.idpId !== req.params[0]);
          });
          return ok({ details: changedDetails(record, ownerDetails(owner)) });
        },
      }),
    ];
  }

  const linkView = (user: { id: string; orgId: string }, link: View<{ idpId: string; externalUserId: string; userName: string }>) => idpLinkView(ctx, user, link);
  /** Removing a link ends the person's sessions: what signed them in may have been that account. */
  const removeLink = async (caller: Caller, userId: string, idpId: string, externalUserId: string) => {
    caller.requireActOn(userId, 'user.write');
    const user = await ctx.orgs.by(caller.by).removeIdpLink(userId, idpId, externalUserId);
    await endSessionsOfUser(ctx, userId);
    return ok({ details: changedDetails(user, user.orgId) });
  };

  const searchLinks: CallerHandler = (req, caller) => {
    const user = requireUserAccess(ctx, caller, req.params[0]!, 'user.read');
    const links = user.human?.idpLinks ?? [];
    return ok({ details: listDetails(links.length), result: links.map((l) => linkView(user, l)) });
  };

  const linkRoutes: Route[] = [
    apiRoute(ctx, '/management/v1/users/:userId/idps/_search', {
      POST: searchLinks,
    }),
    apiRoute(ctx, '/management/v1/users/:userId/idps/:idpId/:linkedUserId', {
      DELETE: (req, caller) => removeLink(caller, req.params[0]!, req.params[1]!, req.params[2]!),
    }),
    apiRoute(ctx, '/v2/users/:userId/links', {
      POST: async (req, caller) => {
        const target = caller.requireActOn(req.params[0]!, 'user.write');
        const { idpLink } = readBody(req, linkSchema);
        // A provider the person's org may use: its own, or the instance's.
        if (!ctx.idps.find(idpLink.idpId, target.orgId)) throw notFound('IDP-0mnf2', `identity provider ${idpLink.idpId} not found (Errors.IDPConfig.NotExisting)`);
        const user = await ctx.orgs.by(caller.by).addIdpLink(target.id, { idpId: idpLink.idpId, externalUserId: idpLink.userId, userName: idpLink.userName });
        return ok({ details: changedDetails(user, user.orgId) });
      },
    }),
    apiRoute(ctx, '/v2/users/:userId/links/_search', {
      POST: searchLinks,
    }),
    apiRoute(ctx, '/v2/users/:userId/links/:idpId/:linkedUserId', {
      DELETE: (req, caller) => removeLink(caller, req.params[0]!, req.params[1]!, req.params[2]!),
    }),
  ];

  return [...prefixes.flatMap(({ prefix, ownerOf }) => [...templateRoutes(prefix, ownerOf), ...loginPolicyIdpRoutes(prefix, ownerOf)]), ...linkRoutes];
}
