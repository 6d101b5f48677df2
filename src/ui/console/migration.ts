import { html, type Html } from '../../util/html.js';
import type { ConsoleTranslate } from './texts.js';
import { checkbox, field, postForm, submit, table } from './widgets.js';

/**
 * Export (a download of the bundle ExportData answers) and import (a bundle uploaded, ImportData's
 * report: what each org brought in, and each refusal with its reason).
 */
export interface ImportReport {
  errors?: { type?: string; id?: string; message?: string }[];
  success?: { orgs?: { orgId: string; humanUserIds?: string[]; machineUserIds?: string[]; projectIds?: string[]; oidcAppIds?: string[]; apiAppIds?: string[] }[] };
}

export function migrationPage(t: ConsoleTranslate, csrf: string, report?: ImportReport): Html {
  const exportForm = postForm(
    '/ui/console/migration/export',
    csrf,
    html`${checkbox(t('migration.onlyThisOrg'), 'onlyThisOrg')}${checkbox(t('migration.withPasswords'), 'withPasswords')}${checkbox(t('migration.withOtp'), 'withOtp')}${submit(t('migration.download'))}`,
  );
  // A form with a file: multipart, the CSRF token one of its fields.
  const importForm = html`<form method="post" action="/ui/console/migration/import" enctype="multipart/form-data"><input type="hidden" name="csrf" value="${csrf}">
<div class="field"><label for="f-file">${t('migration.file')}</label><input id="f-file" name="file" type="file" accept="application/json,.json" required></div>
${checkbox(t('migration.addToExisting'), 'addToExistingOrgs')}${field(t('migration.timeout'), 'timeout', { value: '30m' })}${submit(t('migration.upload'))}</form>`;
  return html`<section class="card"><h2>${t('migration.export')}</h2><p class="intro">${t('migration.exportIntro')}</p>${exportForm}</section>
<section class="card"><h2>${t('migration.import')}</h2><p class="intro">${t('migration.importIntro')}</p>${importForm}</section>
${report ? reportSection(t, report) : ''}`;
}

function reportSection(t: ConsoleTranslate, report: ImportReport): Html {
  const orgs = report.success?.orgs ?? [];
  const count = (list: readonly unknown[] | undefined) => String(list?.length ?? 0);
  return html`<h2>${t('migration.report')}</h2>
${table(
  [t('nav.org'), t('nav.users'), t('nav.projects'), t('projects.apps')],
  orgs.map((o) => [html`<code>${o.orgId}</code>`, `${count(o.humanUserIds)} + ${count(o.machineUserIds)}`, count(o.projectIds), `${count(o.oidcAppIds)} + ${count(o.apiAppIds)}`]),
  t('common.none'),
)}
<h3>${t('migration.errors')}</h3>
${table(
  [t('common.type'), t('common.id'), t('migration.message')],
  (report.errors ?? []).map((e) => [e.type, html`<code>${e.id ?? ''}</code>`, e.message]),
  t('common.none'),
)}`;
}
