import type { ClientsActor } from '../actors/clients.js';
import type { InstanceInfo, OrgsActor } from '../actors/orgs.js';
import type { OidcAppConfig } from '../model/records.js';
import { log } from '../util/log.js';

/**
 * The admin console is an OIDC app of the instance, as in ZITADEL: a client of the instance's
 * management project (so its tokens carry the management API's audience), signing in through
 * Sesame's own login with the code flow and PKCE. Its tokens stay on the server (the console's
 * pages are rendered there); the browser holds a sealed cookie. Every start makes the app where it
 * is missing (a data dir from before the console) and aims its redirect URIs at the issuer.
 */
export const CONSOLE_CLIENT_ID = 'sesame-console';
export const CONSOLE_PATHS = {
  home: '/ui/console',
  callback: '/ui/console/auth/callback',
  signedOut: '/ui/console/signedout',
} as const;

function consoleOidcConfig(issuer: string): OidcAppConfig {
  return {
    redirectUris: [issuer + CONSOLE_PATHS.callback],
    postLogoutRedirectUris: [issuer + CONSOLE_PATHS.signedOut],
    responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
    grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
    // A web app without a secret: the code is bound by PKCE, and the tokens never reach the browser.
    appType: 'OIDC_APP_TYPE_WEB',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
    version: 'OIDC_VERSION_1_0',
    devMode: false,
    accessTokenType: 'OIDC_TOKEN_TYPE_BEARER',
    accessTokenRoleAssertion: false,
    idTokenRoleAssertion: false,
    idTokenUserinfoAssertion: false,
    clockSkewMs: 0,
    additionalOrigins: [],
    skipNativeAppSuccessPage: false,
    backChannelLogoutUri: '',
  };
}

/** The console's app in the management project, made or aimed at this issuer. */
export async function ensureConsoleApp(orgs: OrgsActor, clients: ClientsActor, instance: InstanceInfo, issuer: string): Promise<void> {
  const wanted = consoleOidcConfig(issuer);
  const existing = clients.appByClient(CONSOLE_CLIENT_ID);
  if (existing) {
    if (existing.projectId !== instance.managementProjectId || !existing.oidc) {
      log.error('the client id of the admin console is taken by another app: the console cannot sign anyone in', { clientId: CONSOLE_CLIENT_ID, appId: existing.id });
      return;
    }
    const same = existing.oidc.redirectUris.join(' ') === wanted.redirectUris.join(' ') && existing.oidc.postLogoutRedirectUris.join(' ') === wanted.postLogoutRedirectUris.join(' ');
    if (!same)
      await clients.updateOidcConfig(
        existing.id,
        { ...existing.oidc, redirectUris: wanted.redirectUris, postLogoutRedirectUris: wanted.postLogoutRedirectUris } as OidcAppConfig,
        existing.logoutReceiverByInstance === true,
      );
    return;
  }
  const project = orgs.getProject(instance.managementProjectId);
  if (!project) return;
  await clients.addApp(project, { clientId: CONSOLE_CLIENT_ID, name: 'Console', oidc: wanted });
}
