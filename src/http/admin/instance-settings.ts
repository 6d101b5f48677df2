import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { changedDetails, viewDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { checkOrigins, readBody } from '../../zitadel/validation.js';
import type { CallerPorts } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type InstanceSettingsPorts = Pick<Ports, 'settings'> & CallerPorts;

/**
 * Instance settings: feature flags (ZITADEL feature v2: `PUT /v2/features/instance`) and the
 * security policy (`GET`/`PUT /admin/v1/policies/security`). IAM_OWNER only.
 */
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
        const features = await ctx.settings.setFeatures(change.oidcTokenExchange === undefined ? {} : { oidcTokenExchange: change.oidcTokenExchange });
        return ok({ details: changedDetails(features, undefined) });
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
        const policy = await ctx.settings.setSecurityPolicy(
          Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)),
        );
        return ok({ details: changedDetails(policy, undefined) });
      },
    }),
  ];
}
