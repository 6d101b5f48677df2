import type { Database } from 'lmdb';
import type { Meta } from '../model/records.js';

/**
 * Owns instance-wide settings: feature flags (`PUT /v2/features/instance`) and the security
 * policy (`PUT /admin/v1/policies/security`). A flag forced by configuration wins over the stored one.
 */
export interface Features extends Meta {
  oidcTokenExchange: boolean;
}

export interface SecurityPolicy extends Meta {
  enableIframeEmbedding: boolean;
  allowedOrigins: string[];
  enableImpersonation: boolean;
}

const FRESH: Meta = { createdAt: 0, changedAt: 0, sequence: 0 };

function touch<T extends Meta>(prior: T, change: Partial<T>): T {
  const now = Date.now();
  return { ...prior, ...change, createdAt: prior.createdAt || now, changedAt: now, sequence: prior.sequence + 1 };
}

export class SettingsActor {
  private features: Features;
  private security: SecurityPolicy;

  constructor(
    private readonly meta: Database<any, string>,
    private readonly durable: <R>(write: Promise<R>) => Promise<R>,
    /** From SESAME_FEATURE_TOKEN_EXCHANGE: when set, it decides and the API cannot change it. */
    private readonly forcedTokenExchange: boolean | undefined,
    /** Told the security policy at start and after every change (the HTML headers follow it). */
    private readonly onSecurityPolicy: (policy: SecurityPolicy) => void = () => {},
  ) {
    this.features = (meta.get('features') as Features | undefined) ?? { ...FRESH, oidcTokenExchange: false };
    this.security = (meta.get('securityPolicy') as SecurityPolicy | undefined) ?? {
      ...FRESH,
      enableIframeEmbedding: false,
      allowedOrigins: [],
      enableImpersonation: false,
    };
    onSecurityPolicy(this.security);
  }

  tokenExchangeEnabled(): boolean {
    return this.forcedTokenExchange ?? this.features.oidcTokenExchange;
  }

  /** Where the effective value of the token exchange flag comes from. */
  tokenExchangeSource(): 'SOURCE_SYSTEM' | 'SOURCE_INSTANCE' | 'SOURCE_DEFAULT' {
    if (this.forcedTokenExchange !== undefined) return 'SOURCE_SYSTEM';
    return this.features.sequence > 0 ? 'SOURCE_INSTANCE' : 'SOURCE_DEFAULT';
  }

  featuresRecord(): Features {
    return this.features;
  }

  async setFeatures(change: Partial<Pick<Features, 'oidcTokenExchange'>>): Promise<Features> {
    this.features = touch<Features>(this.features, change);
    await this.durable(this.meta.put('features', this.features));
    return this.features;
  }

  securityPolicy(): SecurityPolicy {
    return this.security;
  }

  async setSecurityPolicy(change: Partial<Pick<SecurityPolicy, 'enableIframeEmbedding' | 'allowedOrigins' | 'enableImpersonation'>>): Promise<SecurityPolicy> {
    this.security = touch<SecurityPolicy>(this.security, change);
    // The pages follow the policy at once; like every write here, it is durable when this resolves.
    this.onSecurityPolicy(this.security);
    await this.durable(this.meta.put('securityPolicy', this.security));
    return this.security;
  }
}
