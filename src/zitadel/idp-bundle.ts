import { invalidArgument } from '../model/errors.js';
import { z } from 'zod';
import { ownerTypeOf, type ProviderSettings } from '../actors/identity-providers.js';
import type { IdentityProvider } from '../model/records.js';
import type { View } from '../util/readonly.js';
import { ADD_SCHEMAS, inputOfView, legacyOidcSchema, legacyOidcSettings, providerView, settingsOf } from './idps.js';
import { validate } from './validation.js';

/**
 * An org's identity providers in a bundle. ZITADEL's bundle has a place for OIDC providers only
 * (`oidcIdps`, the legacy AddOIDCIDP shape): generic OIDC providers go there, so ZITADEL's import
 * takes them. Every provider, of every kind, also goes into Sesame's own list `sesameIdps` (each
 * as the templates API shows it: `{idpId, idp: Provider}`), which ZITADEL's import ignores and
 * Sesame's import prefers. Client secrets and bind passwords are never exported: an imported
 * provider signs nobody in until an administrator sets its secret (`PUT …/idps/…/{id}`).
 */
export function bundleProviderLists(owner: string, providers: readonly View<IdentityProvider>[]): { oidcIdps?: unknown[]; sesameIdps?: unknown[] } {
  if (providers.length === 0) return {};
  const oidc = providers.filter((p) => p.kind === 'oidc');
  return {
    ...(oidc.length
      ? {
          oidcIdps: oidc.map((p) => ({
            idpId: p.id,
            idp: { name: p.name, clientId: p.clientId, issuer: p.issuer, scopes: p.scopes, autoRegister: p.options.isAutoCreation },
          })),
        }
      : {}),
    sesameIdps: providers.map((p) => ({ idpId: p.id, idp: providerView({ provider: p, owner, ownerType: ownerTypeOf(owner) }) })),
  };
}

const sesameEntry = z.object({ idpId: z.string().min(1).max(200), idp: z.object({ name: z.string(), type: z.string(), config: z.record(z.string(), z.unknown()) }).passthrough() });
const legacyEntry = z.object({ idpId: z.string().min(1).max(200), idp: legacyOidcSchema });

/** A bundle entry of `sesameIdps` as a provider to add (its id kept); throws ApiError when invalid. */
export function providerOfSesameEntry(entry: unknown): { id: string; settings: ProviderSettings } {
  const { idpId, idp } = validate(sesameEntry, entry);
  const parsed = inputOfView(idp as never);
  if (!parsed) throw invalidArgument('IDP-k1nd1', `unknown provider type ${idp.type}`);
  // Secrets are not in bundles: the add schema is asked with a placeholder, not stored.
  const input = validate(ADD_SCHEMAS[parsed.kind] as z.ZodType, { ...parsed.input, clientSecret: 'x', bindPassword: 'x' });
  // An import is an instance owner's: it vouches for the addresses, as for apps' logout receivers.
  return { id: idpId, settings: settingsOf(parsed.kind, input as never, true) };
}

/** A bundle entry of `oidcIdps` (ZITADEL's legacy OIDC provider) as a provider to add, its secret if it has one, and what it leaves out. */
export function providerOfOidcEntry(entry: unknown): { id: string; settings: ProviderSettings; secret: string | undefined; unsupported: string[] } {
  const { idpId, idp } = validate(legacyEntry, entry);
  const { settings, unsupported } = legacyOidcSettings(idp, true);
  return { id: idpId, settings, secret: idp.clientSecret || undefined, unsupported };
}
