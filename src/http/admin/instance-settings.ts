import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { changedDetails, viewDetails } from '../../zitadel/details.js';
import { invalidArgument, preconditionFailed } from '../../model/errors.js';
import { apiRoute, ok } from './endpoint.js';
import { checkOrigins, readBody } from '../../zitadel/validation.js';
import { registrationProjectProblem } from '../../domain/management-project.js';
import type { CallerPorts } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type InstanceSettingsPorts = Pick<Ports, 'settings' | 'orgs'> & CallerPorts;

/**
 * Sesame has one instance feature; ZITADEL's others (loginV2, actions, userSchema, …) are refused by
 * name rather than dropped, so nobody believes one is on.
 */
const featuresSchema = z
  .object({ oidcTokenExchange: z.boolean().optional() })
  .catchall(z.unknown())
  .superRefine((value, ctx) => {
    for (const key of Object.keys(value)) {
      if (key !== 'oidcTokenExchange') ctx.addIssue({ code: 'custom', path: [key], message: 'not supported by Sesame (its one feature is oidcTokenExchange)' });
    }
  });

const securitySchema = z.object({
  enableIframeEmbedding: z.boolean().optional(),
  allowedOrigins: z.array(z.string().max(200)).max(100).optional(),
  enableImpersonation: z.boolean().optional(),
});

/** A partial change (absent fields keep their value), like the security policy's. */
const dynamicRegistrationSchema = z.object({
  enabled: z.boolean().optional(),
  allowUnauthenticated: z.boolean().optional(),
  orgId: z.string().max(200).optional(),
  projectId: z.string().max(200).optional(),
  maxClients: z.number().int().min(1).max(100_000).optional(),
  registrationsPerAddressPerHour: z.number().int().min(1).max(10_000).optional(),
});

/**
 * Instance settings: feature flags (ZITADEL feature v2: `PUT /v2/features/instance`), the
 * security policy (`GET`/`PUT /admin/v1/policies/security`) and dynamic client registration
 * (`GET`/`PUT /admin/v1/settings/dynamic_client_registration`). IAM_OWNER only.
 */
export function instanceSettingsRoutes(ctx: InstanceSettingsPorts): Route[] {
  return [
    apiRoute(ctx, '/v2/features/instance', {
      GET: (_req, caller) => {
        caller.require('iam.read', {});
        const features = ctx.settings.featuresRecord();
        return ok({
          details: viewDetails(features, undefined),
          oidcTokenExchange: { enabled: ctx.settings.tokenExchangeEnabled(), source: ctx.settings.tokenExchangeSource() },
        });
      },
      PUT: async (req, caller) => {
        caller.require('iam.write', {});
        const change = readBody(req, featuresSchema);
        const features = await ctx.settings.by(caller.by).setFeatures(change.oidcTokenExchange === undefined ? {} : { oidcTokenExchange: change.oidcTokenExchange });
        return ok({ details: changedDetails(features, undefined) });
      },
    }),
    apiRoute(ctx, '/admin/v1/settings/dynamic_client_registration', {
      GET: (_req, caller) => {
        caller.require('iam.read', {});
        const current = ctx.settings.dynamicRegistration();
        const { createdAt: _c, changedAt: _ch, sequence: _s, ...settings } = current;
        return ok({ details: viewDetails(current, undefined), settings });
      },
      PUT: async (req, caller) => {
        caller.require('iam.write', {});
        const change = Object.fromEntries(Object.entries(readBody(req, dynamicRegistrationSchema)).filter(([, v]) => v !== undefined));
        const next = { ...ctx.settings.dynamicRegistration(), ...change };
        // Registered clients land in this project: it must exist (in that org) before registration opens.
        if (next.projectId !== '' || next.orgId !== '') {
          const project = ctx.orgs.getProject(next.projectId);
          if (!ctx.orgs.getOrg(next.orgId)) throw invalidArgument('DCR-0rg01', `orgId: organization "${next.orgId}" not found`);
          if (!project || project.orgId !== next.orgId) throw invalidArgument('DCR-Prj01', `projectId: project "${next.projectId}" not found in organization ${next.orgId}`);
          const problem = registrationProjectProblem(project.id, ctx.instance.managementProjectId);
          if (problem) throw invalidArgument('DCR-Prj02', `projectId: ${problem}`);
        }
        if (next.enabled && (next.orgId === '' || next.projectId === '')) {
          throw preconditionFailed('DCR-Ena01', 'registration cannot be enabled without orgId and projectId (where registered clients are created)');
        }
        const settings = await ctx.settings.by(caller.by).setDynamicRegistration(change);
        return ok({ details: changedDetails(settings, undefined) });
      },
    }),
    apiRoute(ctx, '/admin/v1/policies/security', {
      GET: (_req, caller) => {
        caller.require('iam.read', {});
        const policy = ctx.settings.securityPolicy();
        return ok({
          policy: {
            details: viewDetails(policy, undefined),
            enableIframeEmbedding: policy.enableIframeEmbedding,
            allowedOrigins: policy.allowedOrigins,
            enableImpersonation: policy.enableImpersonation,
          },
        });
      },
      PUT: async (req, caller) => {
        caller.require('iam.write', {});
        const change = readBody(req, securitySchema);
        // They become `frame-ancestors` sources: only plain origins, nothing a CSP could misread.
        if (change.allowedOrigins) checkOrigins('allowedOrigins', change.allowedOrigins);
        const policy = await ctx.settings.by(caller.by).setSecurityPolicy(Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)));
        return ok({ details: changedDetails(policy, undefined) });
      },
    }),
  ];
}
