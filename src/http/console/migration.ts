import { importJobPage, migrationPage, type ImportJobView } from '../../ui/console/migration.js';
import { clock } from '../../util/clock.js';
import type { Route } from '../types.js';
import { acting, consoleRoute, type ConsoleCall, type ConsoleKit } from './page.js';
import { redirectResponse } from '../html.js';
import type { ApiProblem } from './api.js';

/**
 * Import and export in the console, through ExportData and ImportData (`/admin/v1/export`,
 * `/admin/v1/imports`, instance owners only): the bundle is downloaded as the API answers it; an
 * uploaded bundle is sent as ImportData's `dataOrgs` to an import that runs on after the answer,
 * and the browser goes to its page, which shows how far it is (reloading itself with a `Refresh`
 * header, no script) and its report once over. Uploads are bounded here below the API's 512 MiB
 * (the page holds the whole upload); larger bundles go to the API or `sesame import`.
 */
export const CONSOLE_IMPORT_MAX = 64 * 1024 * 1024;

/** A duration as ImportData takes it (`30m`, `1h`, `90s`): anything else is left to the API's default. */
const DURATION = /^\d{1,6}(ms|s|m|h)$/;

/** While an import runs its page reloads this often (seconds). */
const REFRESH_SECONDS = 2;

async function page(call: ConsoleCall, problem?: ApiProblem) {
  const recent = await call.api.call<{ result?: ImportJobView[] }>('GET', '/admin/v1/imports');
  const notice = problem ? { kind: 'error' as const, text: problem.message } : undefined;
  return call.page('migration', call.t('nav.migration'), migrationPage(call.t, call.csrf, recent.result ?? []), notice, problem?.status);
}

export function migrationConsoleRoutes(kit: ConsoleKit): Route[] {
  return [
    consoleRoute(kit, '/ui/console/migration', { GET: (call) => page(call) }),
    consoleRoute(kit, '/ui/console/migration/imports/:jobId', {
      GET: async (call) => {
        const { job } = await call.api.call<{ job: ImportJobView }>('GET', '/admin/v1/imports/:jobId', [call.req.params[0]!]);
        const answer = await call.page('migration', `${call.t('migration.job')} · ${call.t(`migration.state.${job.state}`)}`, importJobPage(call.t, job));
        return job.state === 'running' ? { ...answer, headers: { ...answer.headers, Refresh: String(REFRESH_SECONDS) } } : answer;
      },
    }),
    consoleRoute(kit, '/ui/console/migration/export', {
      POST: (call) =>
        acting(
          async () => {
            const f = call.form;
            const body = {
              withPasswords: f.get('withPasswords') === 'true',
              withOtp: f.get('withOtp') === 'true',
              responseOutput: true,
              ...(f.get('onlyThisOrg') === 'true' ? { orgIds: [call.session.orgId] } : {}),
            };
            const answer = await call.api.send('POST', '/admin/v1/export', [], Buffer.from(JSON.stringify(body)));
            const day = new Date(clock.now()).toISOString().slice(0, 10);
            return {
              status: 200,
              headers: {
                'Content-Type': 'application/json',
                'Cache-Control': 'no-store',
                'Content-Disposition': `attachment; filename="sesame-export-${day}.json"`,
                'X-Content-Type-Options': 'nosniff',
              },
              body: answer.body ?? '',
            };
          },
          (problem) => page(call, problem),
        ),
    }),
    consoleRoute(
      kit,
      '/ui/console/migration/import',
      {
        POST: (call) =>
          acting(
            async () => {
              const timeout = (call.form.get('timeout') ?? '').trim();
              const head = JSON.stringify({ timeout: DURATION.test(timeout) ? timeout : '30m', addToExistingOrgs: call.form.get('addToExistingOrgs') === 'true' });
              // The bundle goes in as uploaded (ImportData parses and checks it): `{…, "dataOrgs": <bundle>}`.
              const body = Buffer.concat([Buffer.from(`${head.slice(0, -1)},"dataOrgs":`), Buffer.from(call.file ?? new Uint8Array()), Buffer.from('}')]);
              const answer = await call.api.send('POST', '/admin/v1/imports', [], body);
              const { id } = JSON.parse(String(answer.body ?? '{}')) as { id: string };
              // Its page, without seeOther's "Done.": the import has only begun.
              return redirectResponse(`/ui/console/migration/imports/${encodeURIComponent(id)}`, {}, 303);
            },
            (problem) => page(call, problem),
          ),
      },
      { upload: CONSOLE_IMPORT_MAX },
    ),
  ];
}
