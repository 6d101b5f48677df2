import { settingsPage, smtpPage, type InstanceSettingsData, type SmtpView } from '../../ui/console/settings.js';
import type { Method, Response, Route } from '../types.js';
import type { ApiProblem } from './api.js';
import { acting, consoleRoute, doneNotice, formLines, seeOther, type ConsoleCall, type ConsoleKit } from './page.js';

/** A number field: empty stays unset (the API keeps the value), anything else is sent as typed (the API refuses what is not a number). */
const numberField = (call: ConsoleCall, name: string): number | undefined => {
  const typed = (call.form.get(name) ?? '').trim();
  return typed === '' ? undefined : Number(typed);
};

const checked = (call: ConsoleCall, name: string) => call.form.get(name) === 'true';

async function settingsPageOf(call: ConsoleCall, problem?: ApiProblem): Promise<Response> {
  const [features, security, registration] = await Promise.all([
    call.api.call<{ oidcTokenExchange?: { enabled?: boolean } }>('GET', '/v2/features/instance'),
    call.api.call<{ policy?: InstanceSettingsData['security'] }>('GET', '/admin/v1/policies/security'),
    call.api.call<{ settings?: InstanceSettingsData['registration'] }>('GET', '/admin/v1/settings/dynamic_client_registration'),
  ]);
  const data: InstanceSettingsData = { tokenExchange: features.oidcTokenExchange?.enabled === true, security: security.policy ?? {}, registration: registration.settings ?? {} };
  return call.page('settings', call.t('nav.settings'), settingsPage(call.t, call.csrf, data), problem ? { kind: 'error', text: problem.message } : doneNotice(call.req, call.t), problem?.status);
}

async function smtpPageOf(call: ConsoleCall, problem?: ApiProblem, tested = false): Promise<Response> {
  const { result } = await call.api.call<{ result?: SmtpView[] }>('POST', '/admin/v1/smtp/_search', [], {});
  const notice = problem ? { kind: 'error' as const, text: problem.message } : tested ? { kind: 'info' as const, text: call.t('smtp.tested') } : doneNotice(call.req, call.t);
  return call.page('smtp', call.t('nav.smtp'), smtpPage(call.t, call.csrf, result ?? []), notice, problem?.status);
}

/**
 * The instance's settings (`/v2/features/instance`, `/admin/v1/policies/security`,
 * `/admin/v1/settings/dynamic_client_registration`) and its SMTP configurations (`/admin/v1/smtp…`):
 * forms the admin API validates and decides on, for the instance's administrators.
 */
export function settingsConsoleRoutes(kit: ConsoleKit): Route[] {
  const settingsForm = (suffix: string, method: Method, path: string, body: (call: ConsoleCall) => Record<string, unknown>) =>
    consoleRoute(kit, `/ui/console/settings/${suffix}`, {
      POST: (call) =>
        acting(
          async () => {
            await call.api.call(method, path, [], body(call));
            return seeOther('/ui/console/settings');
          },
          (problem) => settingsPageOf(call, problem),
        ),
    });
  const smtpAction = (suffix: string, method: Method, path: string, body?: (call: ConsoleCall) => Record<string, unknown>, after?: (call: ConsoleCall) => Promise<Response>) =>
    consoleRoute(kit, `/ui/console/smtp/:id/${suffix}`, {
      POST: (call) =>
        acting(
          async () => {
            await call.api.call(method, path, [call.req.params[0]!], body ? body(call) : method === 'DELETE' ? undefined : {});
            return after ? after(call) : seeOther('/ui/console/smtp');
          },
          (problem) => smtpPageOf(call, problem),
        ),
    });
  return [
    consoleRoute(kit, '/ui/console/settings', { GET: (call) => settingsPageOf(call) }),
    settingsForm('features', 'PUT', '/v2/features/instance', (call) => ({ oidcTokenExchange: checked(call, 'oidcTokenExchange') })),
    settingsForm('security', 'PUT', '/admin/v1/policies/security', (call) => ({
      enableIframeEmbedding: checked(call, 'enableIframeEmbedding'),
      allowedOrigins: formLines(call.form.get('allowedOrigins')),
      enableImpersonation: checked(call, 'enableImpersonation'),
    })),
    settingsForm('registration', 'PUT', '/admin/v1/settings/dynamic_client_registration', (call) => ({
      enabled: checked(call, 'enabled'),
      allowUnauthenticated: checked(call, 'allowUnauthenticated'),
      orgId: (call.form.get('orgId') ?? '').trim(),
      projectId: (call.form.get('projectId') ?? '').trim(),
      maxClients: numberField(call, 'maxClients'),
      registrationsPerAddressPerHour: numberField(call, 'registrationsPerAddressPerHour'),
    })),
    consoleRoute(kit, '/ui/console/smtp', {
      GET: (call) => smtpPageOf(call),
      POST: (call) =>
        acting(
          async () => {
            const f = call.form;
            await call.api.call('POST', '/admin/v1/smtp', [], {
              description: f.get('description') ?? '',
              host: f.get('host') ?? '',
              tls: f.get('tls') === 'true',
              user: f.get('user') ?? '',
              password: f.get('password') ?? '',
              senderAddress: f.get('senderAddress') ?? '',
              senderName: f.get('senderName') ?? '',
            });
            return seeOther('/ui/console/smtp');
          },
          (problem) => smtpPageOf(call, problem),
        ),
    }),
    smtpAction('activate', 'POST', '/admin/v1/smtp/:id/_activate'),
    smtpAction('deactivate', 'POST', '/admin/v1/smtp/:id/_deactivate'),
    smtpAction('remove', 'DELETE', '/admin/v1/smtp/:id'),
    smtpAction(
      'test',
      'POST',
      '/admin/v1/smtp/:id/_test',
      (call) => ({ receiverAddress: call.form.get('receiverAddress') ?? '' }),
      (call) => smtpPageOf(call, undefined, true),
    ),
  ];
}
