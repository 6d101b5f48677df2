import { POLICIES } from '../../zitadel/policies.js';
import { labelExtras, POLICY_PAGES, policiesIndex, policyForm, type PolicyPage } from '../../ui/console/policies.js';
import { html } from '../../util/html.js';
import type { Response, Route } from '../types.js';
import { ApiProblem } from './api.js';
import { acting, consoleRoute, doneNotice, seeOther, type ConsoleCall, type ConsoleKit } from './page.js';
import { policyBody, policyFields } from './policy-form.js';

/**
 * The console's policies: the org's own (`/management/v1/policies/…`: added, changed, back to the
 * default) and the instance's defaults (`/admin/v1/policies/…`), each a form read from the API's schema.
 * The label policy's page edits its preview, activates it, and uploads its logo (the assets API,
 * `/assets/v1/org/policy/label/logo` or the instance's).
 */
const API_PATH: Record<PolicyPage, string> = { login: 'login', lockout: 'lockout', 'password-complexity': 'password/complexity', privacy: 'privacy', label: 'label', domain: 'domain' };
/** The label policy is edited as its preview (`…/label/_preview`), put in force by `…/label/_activate`. */
const readPath = (path: string) => (path === 'label' ? 'label/_preview' : path);
/** Logo uploads are too large for a form's default bound; ZITADEL's assets API takes them up to this. */
const LOGO_MAX = 1024 * 1024;

function definitionOf(page: string) {
  if (!(POLICY_PAGES as readonly string[]).includes(page)) throw new ApiProblem(404, `no policy ${page.slice(0, 50)}`);
  const path = API_PATH[page as PolicyPage];
  return { page: page as PolicyPage, path, definition: Object.values(POLICIES).find((d) => d.path === path && d.kind !== 'labelPreview')! };
}

interface Scope {
  /** The console's pages of this scope. */
  base: string;
  /** The API's prefix. */
  api: string;
  nav: 'policies' | 'defaults';
  title: 'policies.title' | 'policies.defaultsTitle';
  /** The org's own policy can go back to the default; the instance's default cannot. */
  org: boolean;
  /** The assets API's prefix of the label policy's files. */
  assets: string;
}

const ORG: Scope = { base: '/ui/console/policies', api: '/management/v1/policies', nav: 'policies', title: 'policies.title', org: true, assets: '/assets/v1/org/policy/label' };
const INSTANCE: Scope = { base: '/ui/console/defaults', api: '/admin/v1/policies', nav: 'defaults', title: 'policies.defaultsTitle', org: false, assets: '/assets/v1/instance/policy/label' };

type PolicyAnswer = { policy?: Record<string, unknown> & { isDefault?: boolean; logoUrl?: string } };

async function policyPage(call: ConsoleCall, scope: Scope, page: string, problem?: ApiProblem): Promise<Response> {
  const { path, definition, page: known } = definitionOf(page);
  const { policy = {} } = await call.api.call<PolicyAnswer>('GET', `${scope.api}/${readPath(path)}`);
  const fields = policyFields(definition.schema, policy);
  const form = policyForm(call.t, call.csrf, `${scope.base}/${known}`, fields, { isDefault: policy.isDefault === true, org: scope.org });
  const body = known === 'label' ? html`${form}${labelExtras(call.t, call.csrf, `${scope.base}/label`, policy.logoUrl)}` : form;
  return call.page(scope.nav, call.t(`policies.${known}`), body, problem ? { kind: 'error', text: problem.message } : doneNotice(call.req, call.t), problem?.status);
}

function scopeRoutes(kit: ConsoleKit, scope: Scope): Route[] {
  return [
    consoleRoute(kit, scope.base, {
      GET: async (call) => {
        const answers = await Promise.all(POLICY_PAGES.map((page) => call.api.call<PolicyAnswer>('GET', `${scope.api}/${API_PATH[page]}`)));
        const own = new Map(scope.org ? POLICY_PAGES.map((page, i) => [page, answers[i]!.policy?.isDefault !== true] as const) : []);
        return call.page(scope.nav, call.t(scope.title), policiesIndex(call.t, scope.base, own));
      },
    }),
    consoleRoute(kit, `${scope.base}/:page`, {
      GET: (call) => policyPage(call, scope, call.req.params[0]!),
      POST: async (call) => {
        const page = call.req.params[0]!;
        const { path, definition } = definitionOf(page);
        return acting(
          async () => {
            const { policy = {} } = await call.api.call<PolicyAnswer>('GET', `${scope.api}/${readPath(path)}`);
            const body = policyBody(policyFields(definition.schema, policy), call.form);
            // An org that follows the default adds a policy of its own; one that has one changes it.
            await call.api.call(scope.org && policy.isDefault === true ? 'POST' : 'PUT', `${scope.api}/${path}`, [], body);
            return seeOther(`${scope.base}/${page}`);
          },
          (problem) => policyPage(call, scope, page, problem),
        );
      },
    }),
    consoleRoute(kit, `${scope.base}/label/activate`, {
      POST: (call) =>
        acting(
          async () => {
            await call.api.call('POST', `${scope.api}/label/_activate`, [], {});
            return seeOther(`${scope.base}/label`);
          },
          (problem) => policyPage(call, scope, 'label', problem),
        ),
    }),
    consoleRoute(
      kit,
      `${scope.base}/label/logo`,
      {
        POST: (call) =>
          acting(
            async () => {
              // The file as uploaded: the assets API tells its type by its bytes.
              await call.api.send('POST', `${scope.assets}/logo`, [], Buffer.from(call.file ?? new Uint8Array()));
              return seeOther(`${scope.base}/label`);
            },
            (problem) => policyPage(call, scope, 'label', problem),
          ),
      },
      { upload: LOGO_MAX },
    ),
    ...(scope.org
      ? [
          consoleRoute(kit, `${scope.base}/:page/reset`, {
            POST: async (call) => {
              const page = call.req.params[0]!;
              const { path } = definitionOf(page);
              return acting(
                async () => {
                  await call.api.call('DELETE', `${scope.api}/${path}`);
                  return seeOther(`${scope.base}/${page}`);
                },
                (problem) => policyPage(call, scope, page, problem),
              );
            },
          }),
        ]
      : []),
  ];
}

export function policyConsoleRoutes(kit: ConsoleKit): Route[] {
  return [...scopeRoutes(kit, ORG), ...scopeRoutes(kit, INSTANCE)];
}
