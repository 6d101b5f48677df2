import { actingFor, type ActsFor } from './acting-for.js';
import type { Editor } from '../model/activity.js';
import type { OrgsActor, OrgsReader } from './orgs.js';
import type { MasterKey } from '../crypto/master-key.js';
import { INSTANCE_POLICY, MAX_IDPS, type IdentityProvider, type IdpOwnerType, type LoginPolicy } from '../model/records.js';
import { alreadyExists, invalidArgument, notFound } from '../model/errors.js';
import { clock } from '../util/clock.js';
import { newUniqueId } from '../util/ids.js';
import type { View } from '../util/readonly.js';

/**
 * The identity providers (ZITADEL's IdP templates) of the instance and of each org. An owner's
 * providers are one record of the directory's policies (kind `idps`, owner '' for the instance),
 * so every thread and node holds them with the directory and a removal is seen everywhere at the
 * next change of the feed. Client secrets and LDAP bind passwords are sealed with the master key:
 * they are sent to the provider, so they cannot be digests; the API never returns them.
 */
export interface FoundProvider {
  provider: View<IdentityProvider>;
  /** The org that owns it, or '' for the instance's. */
  owner: string;
  ownerType: IdpOwnerType;
}

/** What a new or changed provider is: everything but its id and the record's bookkeeping. */
export type ProviderSettings = Omit<IdentityProvider, 'id' | 'createdAt' | 'changedAt' | 'sequence' | 'clientSecretSealed'>;

export const ownerTypeOf = (owner: string): IdpOwnerType => (owner === INSTANCE_POLICY ? 'IDP_OWNER_TYPE_SYSTEM' : 'IDP_OWNER_TYPE_ORG');

/** Reads, on any thread: the flows (the login) use these. */
export class IdentityProvidersReader {
  constructor(
    protected readonly orgs: Pick<OrgsReader, 'hasOwnPolicy' | 'policy'>,
    private readonly masterKey: MasterKey,
  ) {}

  /** The owner's own providers ('' : the instance's). */
  of(owner: string): readonly View<IdentityProvider>[] {
    return this.orgs.hasOwnPolicy('idps', owner) ? this.orgs.policy('idps', owner).policy.providers : [];
  }

  /** A provider an org can use: its own, else the instance's (an org never sees another org's). */
  find(id: string, orgId: string): FoundProvider | undefined {
    for (const owner of orgId === INSTANCE_POLICY ? [INSTANCE_POLICY] : [orgId, INSTANCE_POLICY]) {
      const provider = this.of(owner).find((p) => p.id === id);
      if (provider) return { provider, owner, ownerType: ownerTypeOf(owner) };
    }
    return undefined;
  }

  /**
   * The providers the login of an org offers (its login policy, its own or the instance's):
   * `allowExternalIdp` and listed in `idps`, and still there. Whatever is not offered signs nobody in.
   */
  offeredBy(orgId: string): FoundProvider[] {
    const policy = this.orgs.policy('login', orgId).policy;
    if (!policy.allowExternalIdp) return [];
    const out: FoundProvider[] = [];
    for (const entry of policy.idps ?? []) {
      const found = this.find(entry.idpId, orgId);
      if (found && found.ownerType === entry.ownerType) out.push(found);
    }
    return out;
  }

  /** Whether the login of an org offers this provider now. */
  usableBy(idpId: string, orgId: string): boolean {
    return this.offeredBy(orgId).some((f) => f.provider.id === idpId);
  }

  /** The client secret in clear, to authenticate at the provider (undefined: none). */
  clientSecret(provider: View<IdentityProvider>): string | undefined {
    return provider.clientSecretSealed ? this.masterKey.decrypt(provider.clientSecretSealed).toString('utf8') : undefined;
  }

  /** The LDAP bind password in clear (stored as the client secret; undefined: none). */
  bindPassword(provider: View<IdentityProvider>): string | undefined {
    return this.clientSecret(provider);
  }

  seal(secret: string): Uint8Array {
    return this.masterKey.encrypt(Buffer.from(secret, 'utf8'));
  }
}

/** Where a provider's secret is sent, and as whom (a change of any of it needs the secret given anew). */
function whereSecretGoes(provider: View<ProviderSettings>): string {
  const { issuer, authorizationEndpoint, tokenEndpoint, userEndpoint, tenant, clientId, ldap, internalAllowed } = provider;
  return JSON.stringify([issuer, authorizationEndpoint, tokenEndpoint, userEndpoint, tenant, clientId, ldap?.servers, ldap?.bindDn, ldap?.startTls, internalAllowed]);
}

/** The providers as the management API changes them (one decision each on the owner's list as stored). */
export class IdentityProviders extends IdentityProvidersReader implements ActsFor {
  /** Who this actor's changes are by (see by); Sesame itself on the actor as composed. */
  readonly editor: Editor | undefined = undefined;

  constructor(
    private readonly writer: OrgsActor,
    masterKey: MasterKey,
  ) {
    super(writer, masterKey);
  }

  /** This actor acting for `editor`: its changes are `editor`'s in the activity log. */
  by(editor: Editor): this {
    return actingFor(this, editor);
  }

  /** The directory's writer, acting for this actor's editor. */
  private get changes(): OrgsActor {
    return this.editor ? this.writer.by(this.editor) : this.writer;
  }

  /** A new provider of `owner`; `secret` is sealed. An id is given by an import (kept, as ZITADEL keeps it). */
  async add(owner: string, settings: ProviderSettings, secret: string | undefined, id = newUniqueId()): Promise<View<IdentityProvider>> {
    const now = clock.now();
    const provider: IdentityProvider = {
      ...settings,
      id,
      ...(secret ? { clientSecretSealed: this.seal(secret) } : {}),
      createdAt: now,
      changedAt: now,
      sequence: 1,
    };
    await this.changes.setPolicy(
      'idps',
      owner,
      (own) => {
        const providers = own?.providers ?? [];
        if (providers.length >= MAX_IDPS) throw invalidArgument('IDP-m4xN', `at most ${MAX_IDPS} identity providers per ${owner ? 'organization' : 'instance'}`);
        if (providers.some((p) => p.id === id) || (owner && this.of(INSTANCE_POLICY).some((p) => p.id === id))) throw alreadyExists('IDP-4n0fs', `identity provider ${id} already exists`);
        if (providers.some((p) => p.name.toLowerCase() === settings.name.toLowerCase())) throw alreadyExists('IDP-n4m3s', `an identity provider named "${settings.name}" already exists`);
        return { providers: [...(providers as IdentityProvider[]), provider] };
      },
      'either',
    );
    return provider;
  }

  /**
   * Changes a provider of `owner` (of the same kind: ZITADEL's update of a template type);
   * `secret` undefined or empty keeps the stored one, as ZITADEL's update does.
   */
  async update(
    owner: string,
    id: string,
    kind: IdentityProvider['kind'] | readonly IdentityProvider['kind'][],
    change: (current: View<IdentityProvider>) => ProviderSettings,
    secret?: string,
  ): Promise<View<IdentityProvider>> {
    let updated: IdentityProvider | undefined;
    await this.changes.setPolicy(
      'idps',
      owner,
      (own) => {
        const providers = (own?.providers ?? []) as IdentityProvider[];
        const current = providers.find((p) => p.id === id && ([kind].flat() as string[]).includes(p.kind));
        if (!current) throw notFound('IDP-0mnf2', `identity provider ${id} not found (Errors.IDPConfig.NotExisting)`);
        const settings = change(current);
        if (providers.some((p) => p.id !== id && p.name.toLowerCase() === settings.name.toLowerCase()))
          throw alreadyExists('IDP-n4m3s', `an identity provider named "${settings.name}" already exists`);
        // The stored secret goes only where it was given for: whoever aims the provider elsewhere (an
        // org administrator at their own host, a provider an instance administrator wrote) gives a new one.
        if (!secret && current.clientSecretSealed && whereSecretGoes(settings) !== whereSecretGoes(current)) {
          throw invalidArgument(
            'IDP-S3crt',
            `the provider's ${settings.ldap ? 'servers or bind DN' : 'issuer or endpoints'} change: give its ${settings.ldap ? 'bindPassword' : 'clientSecret'} again`,
          );
        }
        updated = {
          ...settings,
          id,
          ...(secret ? { clientSecretSealed: this.seal(secret) } : current.clientSecretSealed ? { clientSecretSealed: current.clientSecretSealed } : {}),
          createdAt: current.createdAt,
          changedAt: clock.now(),
          sequence: current.sequence + 1,
        };
        return { providers: providers.map((p) => (p.id === id ? updated! : p)) };
      },
      'either',
      true,
    );
    return updated!;
  }

  /**
   * Removes a provider: from then on it signs nobody in (the login policies that list it skip it).
   * Resolves with the people who were linked to accounts there (their sessions begun there end: see the route).
   */
  async remove(owner: string, id: string): Promise<string[]> {
    await this.changes.setPolicy(
      'idps',
      owner,
      (own) => {
        const providers = (own?.providers ?? []) as IdentityProvider[];
        if (!providers.some((p) => p.id === id)) throw notFound('IDP-0mnf2', `identity provider ${id} not found (Errors.IDPConfig.NotExisting)`);
        return { providers: providers.filter((p) => p.id !== id) };
      },
      'either',
    );
    // The login policies that offer it and the people's links to it go too (ZITADEL removes them with the provider).
    const owners = owner === INSTANCE_POLICY ? [INSTANCE_POLICY, ...this.writer.listOrgs().map((o) => o.id)] : [owner];
    for (const policyOwner of owners) {
      if (!this.writer.hasOwnPolicy('login', policyOwner) || !this.writer.policy('login', policyOwner).policy.idps?.some((i) => i.idpId === id)) continue;
      await this.changes.setPolicy('login', policyOwner, (own) => ({ ...(own as LoginPolicy), idps: (own?.idps ?? []).filter((i) => i.idpId !== id) }), 'either', true);
    }
    return this.changes.removeIdpLinksTo(id, owner);
  }
}
