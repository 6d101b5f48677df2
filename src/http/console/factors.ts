import type { FactorsData } from '../../ui/console/factors.js';
import type { FactorView, LinkView, PasskeyView } from '../../ui/console/api-shapes.js';
import type { Method, Response, Route } from '../types.js';
import type { ApiProblem } from './api.js';
import { acting, consoleRoute, seeOther, type ConsoleCall, type ConsoleKit } from './page.js';

/**
 * A person's second factors, passkeys and linked accounts: read and removed through the auth API
 * (the person's own, on /ui/console/me) or the management API (an administrator's reset, on a
 * user's page). One table of the console's paths and the API's; removals end the person's sessions.
 */
export interface FactorApi {
  /** The console page the forms are on, as a route pattern (`:userId` first where there is one). */
  page: string;
  /** The API's paths; `:userId` (when the page has it) comes first in each. */
  list: { factors: string; passkeys: string; links: string };
  remove: { otp: string; otpEmail: string; u2f: string; passkey: string; link: string };
  passkeyLink: string;
}

export const MY_FACTORS: FactorApi = {
  page: '/ui/console/me',
  list: { factors: '/auth/v1/users/me/auth_factors/_search', passkeys: '/auth/v1/users/me/passwordless/_search', links: '/auth/v1/users/me/idps/_search' },
  remove: {
    otp: '/auth/v1/users/me/auth_factors/otp',
    otpEmail: '/auth/v1/users/me/auth_factors/otp_email',
    u2f: '/auth/v1/users/me/auth_factors/u2f/:tokenId',
    passkey: '/auth/v1/users/me/passwordless/:tokenId',
    link: '/auth/v1/users/me/linked/idps/:idpId/:linkedUserId',
  },
  passkeyLink: '/auth/v1/users/me/passwordless/_send_link',
};

const USER = '/management/v1/users/:userId';
export const USER_FACTORS: FactorApi = {
  page: '/ui/console/users/:userId',
  list: { factors: `${USER}/auth_factors/_search`, passkeys: `${USER}/passwordless/_search`, links: `${USER}/idps/_search` },
  remove: {
    otp: `${USER}/auth_factors/otp`,
    otpEmail: `${USER}/auth_factors/otp_email`,
    u2f: `${USER}/auth_factors/u2f/:tokenId`,
    passkey: `${USER}/passwordless/:tokenId`,
    link: `${USER}/idps/:idpId/:linkedUserId`,
  },
  passkeyLink: `${USER}/passwordless/_send_link`,
};

/** The page's own parameters (the user id of a user's page; none on the account page). */
const pageParams = (api: FactorApi, call: ConsoleCall): string[] => (api.page.includes(':userId') ? [call.req.params[0]!] : []);
const pagePath = (api: FactorApi, call: ConsoleCall): string => api.page.replace(':userId', encodeURIComponent(call.req.params[0] ?? ''));

export async function factorsOf(call: ConsoleCall, api: FactorApi): Promise<FactorsData> {
  const params = pageParams(api, call);
  const [factors, passkeys, links] = await Promise.all([
    call.api.call<{ result?: FactorView[] }>('POST', api.list.factors, params, {}),
    call.api.call<{ result?: PasskeyView[] }>('POST', api.list.passkeys, params, {}),
    call.api.call<{ result?: LinkView[] }>('POST', api.list.links, params, {}),
  ]);
  return { factors: factors.result ?? [], passkeys: passkeys.result ?? [], links: links.result ?? [] };
}

/** The removal routes (and the passkey link) of one page; `render` shows the page with a refusal. */
export function factorRoutes(kit: ConsoleKit, api: FactorApi, render: (call: ConsoleCall, problem?: ApiProblem) => Promise<Response>): Route[] {
  /** `fromForm`: the object's parameters come from these form fields, not the path (values an upstream provider chose: see removeControl). */
  const action = (suffix: string, method: Method, apiPath: string, after: (call: ConsoleCall) => Response = (call) => seeOther(pagePath(api, call)), fromForm?: readonly string[]) =>
    consoleRoute(kit, `${api.page}${suffix}`, {
      POST: (call) =>
        acting(
          async () => {
            // The page's parameters, then the object's (a token id, a provider and account).
            const own = pageParams(api, call);
            const object = fromForm ? fromForm.map((name) => call.form.get(name) ?? '') : call.req.params.slice(own.length);
            await call.api.call(method, apiPath, [...own, ...object], method === 'POST' ? {} : undefined);
            return after(call);
          },
          (problem) => render(call, problem),
        ),
    });
  return [
    action('/factors/otp/remove', 'DELETE', api.remove.otp),
    action('/factors/otp_email/remove', 'DELETE', api.remove.otpEmail),
    action('/factors/u2f/:tokenId/remove', 'DELETE', api.remove.u2f),
    action('/passkeys/:tokenId/remove', 'DELETE', api.remove.passkey),
    action('/links/remove', 'DELETE', api.remove.link, undefined, ['idpId', 'linkedUserId']),
    action('/passkeys/link', 'POST', api.passkeyLink, (call) => seeOther(`${pagePath(api, call)}?sent`)),
  ];
}
