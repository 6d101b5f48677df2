/**
 * An authorization request as the authorize endpoint validated it (src/protocol/authorize/validate.ts)
 * and the auth requests actor keeps it while the user signs in: shared shapes, no rules.
 */
export type ResponseMode = 'query' | 'fragment' | 'form_post';
export type ResponseType = 'code' | 'id_token' | 'id_token token';
export type Prompt = 'none' | 'login' | 'select_account' | 'create' | 'consent';

/** Languages of the login pages (src/ui/i18n.ts has their texts). */
export const LOCALES = ['en', 'de'] as const;
export type Locale = (typeof LOCALES)[number];

export interface ValidatedAuthRequest {
  clientId: string;
  appId: string;
  projectId: string;
  redirectUri: string;
  responseType: ResponseType;
  responseMode: ResponseMode;
  scopes: string[];
  /** Projects named by `urn:zitadel:iam:org:project:id:{id}:aud` scopes. */
  audienceProjects: string[];
  /** The org an org scope restricts the login to. */
  orgId: string | undefined;
  state: string | undefined;
  nonce: string | undefined;
  codeChallenge: string | undefined;
  /** RFC 9449 §10: the DPoP key (thumbprint) the code is bound to; its exchange needs a proof of that key. */
  dpopJkt?: string;
  prompt: Set<Prompt>;
  maxAge: number | undefined;
  loginHint: string | undefined;
  idTokenHint: string | undefined;
  uiLocales: string | undefined;
  /** Resource indicators (RFC 8707) the app may have tokens for; absent when none was named. */
  resources?: string[];
  /**
   * A device authorization (RFC 8628) the sign-in is for, by id: the login then ends on the device
   * page's consent step instead of answering a redirect_uri (it has none).
   */
  device?: string;
}
