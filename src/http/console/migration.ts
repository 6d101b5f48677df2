import { migrationPage, type ImportReport } from '../../ui/console/migration.js';
import { clock } from '../../util/clock.js';
import type { Route } from '../types.js';
import { acting, consoleRoute, type ConsoleKit } from './page.js';

/**
 * Import and export in the console, through ExportData and ImportData (`/admin/v1/export`,
 * `/admin/v1/import`, instance owners only): the bundle is downloaded as the API answers it; an
 * uploaded bundle is sent as ImportData's `dataOrgs`, and its report shown. Uploads are bounded
 * here below the API's 512 MiB (the page holds the whole upload); larger bundles go to the API or
 * `sesame import`.
 */
export const CONSOLE_IMPORT_MAX = 64 * 1024 * 1024;

/** A duration as ImportData takes it (`30m`, `1h`, `90s`): anything else is left to the API's default. */
const DURATION = /^\d{1,6}(ms|s|m|h)$/;

export function migrationConsoleRoutes(kit: ConsoleKit): Route[] {
  return [
    consoleRoute(kit, '/ui/console/migration', { GET: (call) => call.page('migration', call.t('nav.migration'), migrationPage(call.t, call.csrf)) }),
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
          async (problem) => call.page('migration', call.t('nav.migration'), migrationPage(call.t, call.csrf), { kind: 'error', text: problem.message }, problem.status),
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
              const answer = await call.api.send('POST', '/admin/v1/import', [], body);
              const report = JSON.parse(String(answer.body ?? '{}')) as ImportReport;
              return call.page('migration', call.t('nav.migration'), migrationPage(call.t, call.csrf, report));
            },
            async (problem) => call.page('migration', call.t('nav.migration'), migrationPage(call.t, call.csrf), { kind: 'error', text: problem.message }, problem.status),
          ),
      },
      { upload: CONSOLE_IMPORT_MAX },
    ),
  ];
}
