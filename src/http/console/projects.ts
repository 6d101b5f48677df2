import type { AppView, ChangeView, KeyView, ProjectView, RoleView } from '../../ui/console/api-shapes.js';
import { appPage, projectPage, projectsPage } from '../../ui/console/projects.js';
import type { Response, Route } from '../types.js';
import type { ApiProblem } from './api.js';
import { acting, consoleRoute, doneNotice, formLines, seeOther, type ConsoleCall, type ConsoleKit } from './page.js';

/**
 * The console's projects: ListProjects and AddProject; one project with its roles (AddProjectRole,
 * RemoveProjectRole), its state (DeactivateProject, ReactivateProject), its removal (RemoveProject)
 * and applications (AddOIDCApp, AddAPIApp); one application with a new client secret or key file
 * (shown once) and its keys.
 */
const PROJECT = '/management/v1/projects/:projectId';
const APP = `${PROJECT}/apps/:appId`;

const errorNotice = (problem: ApiProblem | undefined) => (problem ? { kind: 'error' as const, text: problem.message } : undefined);

async function listPage(call: ConsoleCall, problem?: ApiProblem): Promise<Response> {
  const { result } = await call.api.call<{ result?: ProjectView[] }>('POST', '/management/v1/projects/_search', [], { query: { limit: 1000, asc: true } });
  return call.page('projects', call.t('projects.title'), projectsPage(call.t, call.csrf, result ?? []), errorNotice(problem) ?? doneNotice(call.req, call.t), problem?.status);
}

async function projectPageOf(call: ConsoleCall, projectId: string, problem?: ApiProblem): Promise<Response> {
  const { project } = await call.api.call<{ project: ProjectView }>('GET', PROJECT, [projectId]);
  const [roles, apps, changes] = await Promise.all([
    call.api.call<{ result?: RoleView[] }>('POST', `${PROJECT}/roles/_search`, [projectId], {}),
    call.api.call<{ result?: AppView[] }>('POST', `${PROJECT}/apps/_search`, [projectId], {}),
    call.api.call<{ result?: ChangeView[] }>('POST', `${PROJECT}/changes/_search`, [projectId], { query: { limit: 20 } }),
  ]);
  const body = projectPage(call.t, call.csrf, { project, roles: roles.result ?? [], apps: apps.result ?? [], changes: changes.result ?? [] });
  return call.page('projects', project.name, body, errorNotice(problem) ?? doneNotice(call.req, call.t), problem?.status);
}

async function appPageOf(kit: ConsoleKit, call: ConsoleCall, projectId: string, appId: string, extra: { once?: { label: string; value: string }; problem?: ApiProblem } = {}): Promise<Response> {
  const { app } = await call.api.call<{ app: AppView }>('GET', APP, [projectId, appId]);
  const keys = usesKeys(app) ? ((await call.api.call<{ result?: KeyView[] }>('POST', `${APP}/keys/_search`, [projectId, appId], { query: { limit: 1000, asc: true } })).result ?? []) : undefined;
  const body = appPage(call.t, call.csrf, { projectId, app, issuer: kit.issuer, ...(keys ? { keys } : {}), ...(extra.once ? { once: extra.once } : {}) });
  return call.page('projects', app.name, body, errorNotice(extra.problem) ?? (extra.once ? undefined : doneNotice(call.req, call.t)), extra.problem?.status);
}

/** A new app's client secret, if it has one, to show once. */
const secretShown = (call: ConsoleCall, clientSecret: string | undefined) => (clientSecret ? { once: { label: call.t('apps.clientSecret'), value: clientSecret } } : {});

/** Whether the app authenticates with keys (private_key_jwt), so has key files to list and make. */
const usesKeys = (app: AppView) => (app.oidcConfig?.authMethodType ?? app.apiConfig?.authMethodType ?? '').endsWith('_PRIVATE_KEY_JWT');

/** A form about one project, sent to the API; back to the project's page (or `after`), a refusal shown there. */
function projectAction(kit: ConsoleKit, action: string, send: (call: ConsoleCall, projectId: string) => Promise<unknown>, after?: string): Route {
  return consoleRoute(kit, `/ui/console/projects/:projectId/${action}`, {
    POST: (call) => {
      const projectId = call.req.params[0]!;
      return acting(
        async () => {
          await send(call, projectId);
          return seeOther(after ?? `/ui/console/projects/${encodeURIComponent(projectId)}`);
        },
        (problem) => projectPageOf(call, projectId, problem),
      );
    },
  });
}

export function projectConsoleRoutes(kit: ConsoleKit): Route[] {
  return [
    consoleRoute(kit, '/ui/console/projects', {
      GET: (call) => listPage(call),
      POST: (call) =>
        acting(
          async () => {
            const { id } = await call.api.call<{ id: string }>('POST', '/management/v1/projects', [], { name: call.form.get('name') ?? '' });
            return seeOther(`/ui/console/projects/${encodeURIComponent(id)}`);
          },
          (problem) => listPage(call, problem),
        ),
    }),
    consoleRoute(kit, '/ui/console/projects/:projectId', { GET: (call) => projectPageOf(call, call.req.params[0]!) }),
    projectAction(kit, 'roles', (call, projectId) =>
      call.api.call('POST', `${PROJECT}/roles`, [projectId], { roleKey: call.form.get('key') ?? '', displayName: call.form.get('displayName') ?? '', group: call.form.get('group') ?? '' }),
    ),
    // The key comes in the form, never in the path (a key may hold `/` or be `..`).
    projectAction(kit, 'roles/remove', (call, projectId) => call.api.call('DELETE', `${PROJECT}/roles/:roleKey`, [projectId, call.form.get('key') ?? ''])),
    projectAction(kit, 'deactivate', (call, projectId) => call.api.call('POST', `${PROJECT}/_deactivate`, [projectId], {})),
    projectAction(kit, 'reactivate', (call, projectId) => call.api.call('POST', `${PROJECT}/_reactivate`, [projectId], {})),
    projectAction(kit, 'remove', (call, projectId) => call.api.call('DELETE', PROJECT, [projectId]), '/ui/console/projects'),
    // A new app's secret is shown once, on the page that answers its creation.
    consoleRoute(kit, '/ui/console/projects/:projectId/apps/oidc', {
      POST: (call) => {
        const projectId = call.req.params[0]!;
        const f = call.form;
        const appType = f.get('appType') ?? 'OIDC_APP_TYPE_WEB';
        return acting(
          async () => {
            const created = await call.api.call<{ appId: string; clientSecret?: string }>('POST', `${PROJECT}/apps/oidc`, [projectId], {
              name: f.get('name') ?? '',
              appType,
              authMethodType: f.get('authMethodType') ?? 'OIDC_AUTH_METHOD_TYPE_BASIC',
              redirectUris: formLines(f.get('redirectUris')),
              postLogoutRedirectUris: formLines(f.get('postLogoutRedirectUris')),
              responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
              grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
              devMode: f.get('devMode') === 'true',
            });
            return appPageOf(kit, call, projectId, created.appId, secretShown(call, created.clientSecret));
          },
          (problem) => projectPageOf(call, projectId, problem),
        );
      },
    }),
    consoleRoute(kit, '/ui/console/projects/:projectId/apps/api', {
      POST: (call) => {
        const projectId = call.req.params[0]!;
        return acting(
          async () => {
            const created = await call.api.call<{ appId: string; clientSecret?: string }>('POST', `${PROJECT}/apps/api`, [projectId], {
              name: call.form.get('name') ?? '',
              authMethodType: call.form.get('authMethodType') ?? 'API_AUTH_METHOD_TYPE_BASIC',
            });
            return appPageOf(kit, call, projectId, created.appId, secretShown(call, created.clientSecret));
          },
          (problem) => projectPageOf(call, projectId, problem),
        );
      },
    }),
    consoleRoute(kit, '/ui/console/projects/:projectId/apps/:appId', { GET: (call) => appPageOf(kit, call, call.req.params[0]!, call.req.params[1]!) }),
    consoleRoute(kit, '/ui/console/projects/:projectId/apps/:appId/secret', {
      POST: (call) => {
        const [projectId, appId] = call.req.params as [string, string];
        return acting(
          async () => {
            const { app } = await call.api.call<{ app: AppView }>('GET', APP, [projectId, appId]);
            const path = app.oidcConfig ? `${APP}/oidc_config/_generate_client_secret` : `${APP}/api_config/_generate_client_secret`;
            const { clientSecret } = await call.api.call<{ clientSecret: string }>('POST', path, [projectId, appId], {});
            return appPageOf(kit, call, projectId, appId, secretShown(call, clientSecret));
          },
          (problem) => projectPageOf(call, projectId, problem),
        );
      },
    }),
    consoleRoute(kit, '/ui/console/projects/:projectId/apps/:appId/keys', {
      POST: (call) => {
        const [projectId, appId] = call.req.params as [string, string];
        return acting(
          async () => {
            const { keyDetails } = await call.api.call<{ keyDetails: string }>('POST', `${APP}/keys`, [projectId, appId], { type: 'KEY_TYPE_JSON' });
            const file = Buffer.from(keyDetails, 'base64').toString('utf8');
            return appPageOf(kit, call, projectId, appId, { once: { label: call.t('apps.keyShown'), value: file } });
          },
          (problem) => appPageOf(kit, call, projectId, appId, { problem }),
        );
      },
    }),
    consoleRoute(kit, '/ui/console/projects/:projectId/apps/:appId/keys/remove', {
      POST: (call) => {
        const [projectId, appId] = call.req.params as [string, string];
        // The key id comes in the form, never in the path: a registrant chooses its `kid` (see removeControl).
        const keyId = call.form.get('keyId') ?? '';
        return acting(
          async () => {
            await call.api.call('DELETE', `${APP}/keys/:keyId`, [projectId, appId, keyId]);
            return seeOther(`/ui/console/projects/${encodeURIComponent(projectId)}/apps/${encodeURIComponent(appId)}`);
          },
          (problem) => appPageOf(kit, call, projectId, appId, { problem }),
        );
      },
    }),
    consoleRoute(kit, '/ui/console/projects/:projectId/apps/:appId/remove', {
      POST: (call) => {
        const [projectId, appId] = call.req.params as [string, string];
        return acting(
          async () => {
            await call.api.call('DELETE', APP, [projectId, appId]);
            return seeOther(`/ui/console/projects/${encodeURIComponent(projectId)}`);
          },
          (problem) => projectPageOf(call, projectId, problem),
        );
      },
    }),
  ];
}
