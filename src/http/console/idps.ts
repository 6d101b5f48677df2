import { idpsPage, type ProviderView } from '../../ui/console/idps.js';
import type { Response, Route } from '../types.js';
import type { ApiProblem } from './api.js';
import { acting, consoleRoute, doneNotice, formLines, seeOther, type ConsoleCall, type ConsoleKit } from './page.js';

/**
 * Identity providers, of the org (`/management/v1/idps…`, its login policy's list) and of the
 * instance (`/admin/v1/idps…`): listed, a generic OIDC provider added, removed, offered at the
 * login or withdrawn. The API decides who may, and whether an address may be reached.
 */
interface Scope {
  base: string;
  api: string;
  nav: 'idps' | 'instanceIdps';
  ownerType: 'IDP_OWNER_TYPE_ORG' | 'IDP_OWNER_TYPE_SYSTEM';
}

const ORG: Scope = { base: '/ui/console/idps', api: '/management/v1', nav: 'idps', ownerType: 'IDP_OWNER_TYPE_ORG' };
const INSTANCE: Scope = { base: '/ui/console/instance/idps', api: '/admin/v1', nav: 'instanceIdps', ownerType: 'IDP_OWNER_TYPE_SYSTEM' };

async function pageOf(call: ConsoleCall, scope: Scope, problem?: ApiProblem): Promise<Response> {
  const [providers, offered] = await Promise.all([
    call.api.call<{ result?: ProviderView[] }>('POST', `${scope.api}/idps/templates/_search`, [], {}),
    call.api.call<{ result?: { idpId: string }[] }>('POST', `${scope.api}/policies/login/idps/_search`, [], {}),
  ]);
  const body = idpsPage(call.t, call.csrf, { base: scope.base, providers: providers.result ?? [], offered: new Set((offered.result ?? []).map((o) => o.idpId)), ownerType: scope.ownerType });
  return call.page(scope.nav, call.t(scope.nav === 'idps' ? 'nav.idps' : 'nav.instanceIdps'), body, problem ? { kind: 'error', text: problem.message } : doneNotice(call.req, call.t), problem?.status);
}

function scopeRoutes(kit: ConsoleKit, scope: Scope): Route[] {
  const action = (suffix: string, act: (call: ConsoleCall, id: string) => Promise<unknown>) =>
    consoleRoute(kit, `${scope.base}/:id/${suffix}`, {
      POST: (call) =>
        acting(
          async () => {
            await act(call, call.req.params[0]!);
            return seeOther(scope.base);
          },
          (problem) => pageOf(call, scope, problem),
        ),
    });
  return [
    consoleRoute(kit, scope.base, {
      GET: (call) => pageOf(call, scope),
      POST: (call) =>
        acting(
          async () => {
            const f = call.form;
            const flag = (name: string) => f.get(name) === 'true';
            await call.api.call('POST', `${scope.api}/idps/generic_oidc`, [], {
              name: f.get('name') ?? '',
              issuer: f.get('issuer') ?? '',
              clientId: f.get('clientId') ?? '',
              clientSecret: f.get('clientSecret') ?? '',
              scopes: formLines(f.get('scopes')),
              usePkce: flag('usePkce'),
              providerOptions: { isLinkingAllowed: flag('isLinkingAllowed'), isCreationAllowed: flag('isCreationAllowed'), isAutoUpdate: flag('isAutoUpdate') },
            });
            return seeOther(scope.base);
          },
          (problem) => pageOf(call, scope, problem),
        ),
    }),
    action('remove', (call, id) => call.api.call('DELETE', `${scope.api}/idps/:id`, [id])),
    action('offer', async (call, id) => {
      // The owner type as the API names it for this provider (an org's page also lists the instance's).
      const { idp } = await call.api.call<{ idp: ProviderView }>('GET', `${scope.api}/idps/templates/:id`, [id]);
      return call.api.call('POST', `${scope.api}/policies/login/idps`, [], { idpId: id, ownerType: idp.owner });
    }),
    action('withdraw', (call, id) => call.api.call('DELETE', `${scope.api}/policies/login/idps/:idpId`, [id])),
  ];
}

export function idpConsoleRoutes(kit: ConsoleKit): Route[] {
  return [...scopeRoutes(kit, ORG), ...scopeRoutes(kit, INSTANCE)];
}
