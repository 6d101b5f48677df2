import { actingFor, type ActsFor } from './acting-for.js';
import type { Editor } from '../model/activity.js';
import { decidedAgain } from './decided-again.js';
import type { Meta } from '../model/records.js';
import type { MetaStore } from '../storage/meta.js';
import type { View } from '../util/readonly.js';

/**
 * Instance-wide settings: feature flags (`PUT /v2/features/instance`), the security policy
 * (`PUT /admin/v1/policies/security`) and dynamic client registration
 * (`PUT /admin/v1/settings/dynamic_client_registration`). A flag forced by configuration wins over the stored one.
 * The records are kept (in memory and on disk) by the `meta` store's owner, MetaStore.
 */
export interface Features extends Meta {
  oidcTokenExchange: boolean;
}

export interface SecurityPolicy extends Meta {
  enableIframeEmbedding: boolean;
  allowedOrigins: string[];
  enableImpersonation: boolean;
}

/**
 * Dynamic client registration (RFC 7591/7592, ZITADEL's DynamicClientRegistrationSettings):
 * off by default; when on, registered clients become OIDC apps of `projectId` in `orgId`.
 */
export interface DynamicRegistrationSettings extends Meta {
  enabled: boolean;
  /** Registration without an initial access token (open registration, limited per address). */
  allowUnauthenticated: boolean;
  orgId: string;
  projectId: string;
  /** At most this many registered clients in the project (registration refused beyond). */
  maxClients: number;
  /** Unauthenticated registrations per source address (IPv6: per /64) and hour. */
  registrationsPerAddressPerHour: number;
}

type DynamicRegistrationChange = Partial<Omit<DynamicRegistrationSettings, keyof Meta>>;

const FRESH: Meta = { createdAt: 0, changedAt: 0, sequence: 0 };

function touch<T extends Meta>(prior: View<T>, change: Partial<T>): T {
  const now = Date.now();
  return { ...(prior as T), ...change, createdAt: prior.createdAt || now, changedAt: now, sequence: prior.sequence + 1 };
}

const DEFAULT_FEATURES: View<Features> = { ...FRESH, oidcTokenExchange: false };
const DEFAULT_DYNAMIC_REGISTRATION: View<DynamicRegistrationSettings> = {
  ...FRESH,
  enabled: false,
  allowUnauthenticated: false,
  orgId: '',
  projectId: '',
  maxClients: 1000,
  registrationsPerAddressPerHour: 10,
};
const DEFAULT_SECURITY: View<SecurityPolicy> = { ...FRESH, enableIframeEmbedding: false, allowedOrigins: [], enableImpersonation: false };

export class SettingsActor implements ActsFor {
  /** Who this actor's changes are by (see by); Sesame itself on the actor as composed. */
  readonly editor: Editor | undefined = undefined;

  /** This actor acting for `editor`: its changes are `editor`'s in the activity log. */
  by(editor: Editor): this {
    return actingFor(this, editor);
  }

  constructor(
    private readonly meta: MetaStore,
    /** From SESAME_FEATURE_TOKEN_EXCHANGE: when set, it decides and the API cannot change it. */
    private readonly forcedTokenExchange: boolean | undefined,
    /** Told the security policy at start and after every change (the HTML headers follow it). */
    private readonly onSecurityPolicy: (policy: View<SecurityPolicy>) => void = () => {},
  ) {
    onSecurityPolicy(this.security);
  }

  /** The stored records were read again (a copy of the directory took another thread's change): the pages follow the policy. */
  storedChanged(): void {
    this.onSecurityPolicy(this.security);
  }

  private get features(): View<Features> {
    return this.meta.features<Features>() ?? DEFAULT_FEATURES;
  }

  private get security(): View<SecurityPolicy> {
    return this.meta.securityPolicy<SecurityPolicy>() ?? DEFAULT_SECURITY;
  }

  tokenExchangeEnabled(): boolean {
    return this.forcedTokenExchange ?? this.features.oidcTokenExchange;
  }

  /** Where the effective value of the token exchange flag comes from. */
  tokenExchangeSource(): 'SOURCE_SYSTEM' | 'SOURCE_INSTANCE' | 'SOURCE_DEFAULT' {
    if (this.forcedTokenExchange !== undefined) return 'SOURCE_SYSTEM';
    return this.features.sequence > 0 ? 'SOURCE_INSTANCE' : 'SOURCE_DEFAULT';
  }

  featuresRecord(): View<Features> {
    return this.features;
  }

  setFeatures(change: Partial<Pick<Features, 'oidcTokenExchange'>>): Promise<View<Features>> {
    return this.decidedAgain(async () => {
      const next = touch<Features>(this.features, change);
      await this.meta.setFeatures(next, this.editor);
      return next;
    });
  }

  /** Cheap (discovery asks on every request). */
  dynamicRegistrationEnabled(): boolean {
    return this.meta.dynamicRegistration<DynamicRegistrationSettings>()?.enabled ?? false;
  }

  dynamicRegistration(): View<DynamicRegistrationSettings> {
    // Defaults under the stored record: a record written before a field existed still has all.
    return { ...DEFAULT_DYNAMIC_REGISTRATION, ...this.meta.dynamicRegistration<DynamicRegistrationSettings>() };
  }

  setDynamicRegistration(change: DynamicRegistrationChange): Promise<View<DynamicRegistrationSettings>> {
    return this.decidedAgain(async () => {
      const next = touch<DynamicRegistrationSettings>(this.dynamicRegistration(), change);
      await this.meta.setDynamicRegistration(next, this.editor);
      return next;
    });
  }

  securityPolicy(): View<SecurityPolicy> {
    return this.security;
  }

  setSecurityPolicy(change: Partial<Pick<SecurityPolicy, 'enableIframeEmbedding' | 'allowedOrigins' | 'enableImpersonation'>>): Promise<View<SecurityPolicy>> {
    return this.decidedAgain(async () => {
      const next = touch<SecurityPolicy>(this.security, change);
      // The pages follow the policy at once; like every write here, it is durable when this resolves
      // (and if the write fails, the pages go back to the policy in force).
      const write = this.meta.setSecurityPolicy(next, this.editor);
      this.onSecurityPolicy(next);
      try {
        await write;
      } catch (error) {
        this.onSecurityPolicy(this.security);
        throw error;
      }
      return next;
    });
  }

  /**
   * A settings change decided on the stored record: when another thread changed the record since
   * this copy read it (the store refuses the write), the copy reads the settings again and the
   * change is decided again on them, so changes to different fields made at once both land.
   */
  private decidedAgain<T>(attempt: () => Promise<T>): Promise<T> {
    return decidedAgain({ fetch: () => this.meta.reread() }, { takeChange: () => (this.meta.reload(), this.storedChanged(), true) }, attempt);
  }
}
