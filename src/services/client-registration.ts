import type { Editor } from '../model/activity.js';
import type { ClientsActor } from '../actors/clients.js';
import { challenge } from '../protocol/bearer.js';
import { ApiError, QuotaReached } from '../model/errors.js';
import type { AppRecord, ClientRegistration, OidcAppConfig } from '../model/records.js';
import { usesClientSecret } from '../model/records.js';
import { metadataError, readClientMetadata, redirectUriError, TOKEN_EXCHANGE_GRANT, type ClientMetadata } from '../protocol/client-metadata.js';
import { OAuthError } from '../protocol/errors.js';
import { PATHS } from '../protocol/discovery.js';
import type { DynamicRegistrationSettings } from '../actors/settings.js';
import { registrationProjectProblem } from '../domain/management-project.js';
import { instanceLifetimeLimits, oidcConfigView, refuseSettingsOfFeaturesOff, toOidcAppConfig } from '../zitadel/oidc-config.js';
import { oidcConfigInputOf, registeredMetadataOf } from '../zitadel/registered-client.js';
import { newAlphanumericSecret, newId } from '../util/ids.js';
import { secretMatches, sha256 } from '../util/hash.js';
import { clock } from '../util/clock.js';
import type { View } from '../util/readonly.js';
import type { Ports } from './ports.js';
import type { ClientRegistrar, RegistrationAnswer } from './client-registrar.js';

/** What this module uses of the wired parts (src/app.ts). */
export type ClientRegistrationPorts = Pick<Ports, 'clients' | 'orgs' | 'settings' | 'config' | 'issuer' | 'instance'>;

/** Where clients register; a registered client is managed (RFC 7592) at this path and its client id. */
export const REGISTRATION_PATH = PATHS.registration;

/** The redirect URI rules of the management API, whose failures name the redirect URIs. */
const REDIRECT_URI_RULES = new Set(['APP-Rdr1a', 'APP-Rdr2h', 'APP-Rdr3c', 'APP-Rdr4s', 'APP-Rdr5f', 'APP-Rdr6c']);

/** The JSON text as metadata (RFC 7591 §3.2.2: one that is not JSON is bad metadata, not a server error). */
function metadataJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw metadataError('the body is not JSON in UTF-8');
  }
}

/** RFC 6750 §3: the challenge of a refused registration access token (or initial access token). */
export function invalidToken(description: string): OAuthError {
  return new OAuthError('invalid_token', description, { headers: { 'WWW-Authenticate': challenge('Bearer', { error: 'invalid_token', error_description: description }) } });
}

/**
 * Token exchange turns tokens a person gave one client into tokens of other shapes and audiences:
 * a client anyone registered without an initial access token gets no such grant.
 */
function refuseAnonymousGrants(metadata: ClientMetadata, anonymous: boolean): void {
  if (anonymous && metadata.grant_types.includes(TOKEN_EXCHANGE_GRANT)) {
    throw metadataError(`grant_types: ${TOKEN_EXCHANGE_GRANT} needs an initial access token to register (open registration does not offer it)`);
  }
}

/** The settings in force; 404 when registration is off (the endpoints do not exist then). */
export function registrationSettingsInForce(ctx: Pick<ClientRegistrationPorts, 'settings'>): View<DynamicRegistrationSettings> {
  const settings = ctx.settings.dynamicRegistration();
  if (!settings.enabled) throw new OAuthError('invalid_request', 'dynamic client registration is not enabled', { status: 404 });
  return settings;
}

/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592): a registered client is an
 * OIDC app of the configured project, made by the same rules and actor calls as AddOIDCApp; its
 * registration access token is kept as a SHA-256 digest on the app. Who may register (initial
 * access token or per-address limit) is the route's to check, before anything here runs.
 */
export class ClientRegistrations implements ClientRegistrar {
  constructor(private readonly ctx: ClientRegistrationPorts) {}

  /** The settings in force; 404 when registration is off. */
  settings(): View<DynamicRegistrationSettings> {
    return registrationSettingsInForce(this.ctx);
  }

  /** RFC 7591 §3.1: registers the client described by `body`; the answer carries its credentials once. */
  async register(json: string, registrant: { anonymous: boolean; by: Editor }): Promise<RegistrationAnswer> {
    const settings = this.settings();
    const metadata = readClientMetadata(metadataJson(json));
    refuseAnonymousGrants(metadata, registrant.anonymous);
    const oidc = this.oidcConfig(metadata);
    const project = this.ctx.orgs.getProject(settings.projectId);
    if (!project || project.orgId !== settings.orgId) {
      throw new OAuthError('temporarily_unavailable', 'the project for registered clients does not exist (check the dynamic client registration settings)');
    }
    // A setting stored before the API refused it is not honoured either.
    const problem = registrationProjectProblem(project.id, this.ctx.instance.managementProjectId);
    if (problem) throw new OAuthError('temporarily_unavailable', `${problem} (change the dynamic client registration settings)`);
    for (const key of metadata.keys) {
      if (this.ctx.clients.appKeyIdTaken(key.kid)) throw metadataError(`jwks: the kid "${key.kid}" is taken; choose another`);
    }
    const registrationAccessToken = newAlphanumericSecret(64);
    const registration: ClientRegistration = {
      accessTokenHash: sha256(registrationAccessToken),
      issuedAt: clock.seconds(),
      metadata: metadata.info,
      ...(metadata.scopes ? { scopes: metadata.scopes } : {}),
      ...(registrant.anonymous ? { anonymous: true as const } : {}),
    };
    const clientId = newId();
    // Counted and added without a pause between (addApp claims the app at once), so concurrent
    // registrations cannot pass the quota together.
    const quotaReached = () => new OAuthError('access_denied', `the project holds the most registered clients allowed (${settings.maxClients})`);
    // Answered early from this thread's copy; the store decides (each registered client holds one of the project's places).
    if (this.ctx.clients.registeredAppsOfProject(project.id) >= settings.maxClients) throw quotaReached();
    const clients = this.ctx.clients.by(registrant.by);
    const { app, clientSecret } = await clients.addApp(project, { clientId, name: appName(metadata, clientId), oidc, registration }, settings.maxClients).catch((error: unknown) => {
      throw error instanceof QuotaReached ? quotaReached() : error;
    });
    await this.addKeys(clients, app, metadata);
    return {
      body: {
        ...this.describe(app),
        ...(clientSecret ? { client_secret: clientSecret } : {}),
        registration_access_token: registrationAccessToken,
      },
    };
  }

  /** RFC 7592 §2.1: the client's metadata as registered (no secret: only its digest is kept). */
  async read(clientId: string, token: string | undefined): Promise<RegistrationAnswer> {
    this.settings();
    return { body: this.describe(this.authenticate(clientId, token)) };
  }

  /**
   * RFC 7592 §2.2: replaces the client's metadata with `body` (absent fields take their defaults).
   * The client id, secret, auth method, keys and registration access token stay as they are.
   */
  async update(clientId: string, token: string | undefined, json: string, by: Editor): Promise<RegistrationAnswer> {
    this.settings();
    const app = this.authenticate(clientId, token);
    const body = metadataJson(json);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('the body must be a JSON object');
    const { client_id: presentedId, client_secret: presentedSecret, ...rest } = body as Record<string, unknown>;
    if (presentedId !== app.clientId) throw metadataError("client_id must be the registered client's (RFC 7592 §2.2)");
    if (presentedSecret !== undefined && (typeof presentedSecret !== 'string' || !this.ctx.clients.appSecretMatches(app, presentedSecret))) {
      throw metadataError('client_secret does not match the one issued');
    }
    const metadata = readClientMetadata(rest);
    refuseAnonymousGrants(metadata, app.registration!.anonymous === true);
    const oidc = this.oidcConfig(metadata, app);
    if (oidc.authMethodType !== app.oidc!.authMethodType) {
      throw metadataError('token_endpoint_auth_method cannot change after registration; register a new client');
    }
    this.checkSameKeys(app, metadata);
    // RFC 7592 §2.2: the metadata is replaced as a whole, so a scope left out is no bound any more.
    const { scopes: _previous, ...kept } = app.registration!;
    const registration: ClientRegistration = { ...kept, metadata: metadata.info, ...(metadata.scopes ? { scopes: metadata.scopes } : {}) };
    const updated = await this.ctx.clients.by(by).updateRegisteredApp(app.id, oidc, registration);
    return { body: this.describe(updated) };
  }

  /** RFC 7592 §2.3: removes the client (as the management API's RemoveApp does). */
  async remove(clientId: string, token: string | undefined, by: Editor): Promise<void> {
    this.settings();
    const app = this.authenticate(clientId, token);
    await this.ctx.clients.by(by).removeApp(app.id);
  }

  /** The registered client whose registration access token `token` is; 401 otherwise. */
  private authenticate(clientId: string, token: string | undefined): View<AppRecord> {
    if (token === undefined) throw invalidToken('registration access token missing');
    const app = this.ctx.clients.appByClient(clientId);
    if (!app?.registration || !app.oidc || !secretMatches(token, app.registration.accessTokenHash)) {
      throw invalidToken('registration access token invalid, or the client does not exist');
    }
    return app;
  }

  /** The app configuration by the management API's rules, its failures as RFC 7591 errors. */
  private oidcConfig(metadata: ClientMetadata, current?: View<AppRecord>): OidcAppConfig {
    try {
      const input = oidcConfigInputOf(metadata, current?.oidc ? oidcConfigView(current, current.oidc) : {});
      refuseSettingsOfFeaturesOff(input, this.ctx.config);
      return toOidcAppConfig(input, instanceLifetimeLimits(this.ctx.config));
    } catch (error) {
      if (error instanceof ApiError && error.kind === 'InvalidArgument') {
        throw REDIRECT_URI_RULES.has(error.errorId) ? redirectUriError(error.message) : metadataError(error.message);
      }
      throw error;
    }
  }

  /** A private_key_jwt client's public keys become app keys named by their kid (what its assertions name). */
  private async addKeys(clients: ClientsActor, app: View<AppRecord>, metadata: ClientMetadata): Promise<void> {
    try {
      for (const key of metadata.keys) await clients.addAppKey(app, { id: key.kid, publicKeyPem: key.publicKeyPem });
    } catch (error) {
      // No credentials were handed out: the half-registered client goes again.
      await clients.removeApp(app.id);
      if (error instanceof ApiError && error.kind === 'AlreadyExists') throw metadataError('jwks: a kid is taken; choose another');
      throw error;
    }
  }

  /** Keys are registered once; an update must send the same ones. */
  private checkSameKeys(app: View<AppRecord>, metadata: ClientMetadata): void {
    const registered = this.ctx.clients.appKeysOf(app.id);
    const same = registered.length === metadata.keys.length && metadata.keys.every((key) => registered.some((r) => r.id === key.kid && r.publicKeyPem === key.publicKeyPem));
    if (!same) throw metadataError('jwks cannot change after registration (manage app keys through the management API, or register a new client)');
  }

  /** RFC 7591 §3.2.1's answer without the credentials handed out once. */
  private describe(app: View<AppRecord>): Record<string, unknown> {
    const secret = usesClientSecret(app.oidc!.authMethodType);
    return {
      client_id: app.clientId,
      client_id_issued_at: app.registration!.issuedAt,
      ...(secret ? { client_secret_expires_at: 0 } : {}),
      registration_client_uri: `${this.ctx.issuer}${REGISTRATION_PATH}/${app.clientId}`,
      ...registeredMetadataOf(app, this.ctx.clients.appKeysOf(app.id)),
    };
  }
}

/** The app's name in the management API: unique in the project, since client names need not be. */
function appName(metadata: ClientMetadata, clientId: string): string {
  return `${(metadata.info.client_name ?? 'Registered client').slice(0, 150)} (${clientId})`;
}
