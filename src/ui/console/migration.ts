import { html, type Html } from '../../util/html.js';
import type { ConsoleTranslate } from './texts.js';
import { checkbox, field, postForm, submit, table, when } from './widgets.js';

/**
 * Export (a download of the bundle ExportData answers) and import (a bundle uploaded; its job's
 * page shows how far it is, then ImportData's report: what each org brought in, and each refusal
 * with its reason).
 */
export interface ImportReport {
  errors?: { type?: string; id?: string; message?: string }[];
  success?: { orgs?: { orgId: string; humanUserIds?: string[]; machineUserIds?: string[]; projectIds?: string[]; oidcAppIds?: string[]; apiAppIds?: string[] }[] };
}

/** An import job as `GET /admin/v1/imports/{id}` answers it (http/admin/migration.ts). */
export interface ImportJobView {
  id: string;
  state: 'running' | 'done' | 'failed' | 'interrupted';
  phase?: 'waiting' | 'orgs' | 'grants' | 'members';
  orgsTotal?: number;
  orgsDone?: number;
  users?: number;
  projects?: number;
  apps?: number;
  errors?: number;
  details?: { creationDate?: string; changeDate?: string };
  error?: { message?: string };
  report?: ImportReport;
}

export function migrationPage(t: ConsoleTranslate, csrf: string, recent: readonly ImportJobView[] = []): Html {
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
<section class="card"><h2>${t('migration.import')}</h2><p class="intro">${t('migration.importIntro')} ${t('migration.importIntro2')}</p>${importForm}</section>
<h2>${t('migration.recent')}</h2>
${table(
  [t('migration.started'), t('migration.state'), t('migration.progress')],
  recent.map((job) => [html`<a href="/ui/console/migration/imports/${job.id}">${when(job.details?.creationDate)}</a>`, stateText(t, job), soFar(t, job)]),
  t('common.none'),
)}`;
}

const stateText = (t: ConsoleTranslate, job: ImportJobView): string => t(`migration.state.${job.state}`);

function soFar(t: ConsoleTranslate, job: ImportJobView): string {
  const n = (value: number | undefined) => String(value ?? 0);
  return t('migration.soFar', { users: n(job.users), projects: n(job.projects), apps: n(job.apps), errors: n(job.errors) });
}

/** One import: while it runs, its phase and a bar of the orgs done (the page refreshes itself); once over, its report or why it failed. */
export function importJobPage(t: ConsoleTranslate, job: ImportJobView): Html {
  const total = job.orgsTotal ?? 0;
  const done = job.orgsDone ?? 0;
  const phase = job.phase ?? 'waiting';
  const running = job.state === 'running';
  const where = phase === 'orgs' ? t('migration.phase.orgs', { done: String(done), total: String(total) }) : t(`migration.phase.${phase}`);
  const bar = html`<progress max="${String(Math.max(total, 1))}" value="${String(phase === 'orgs' || phase === 'waiting' ? done : total)}" aria-label="${t('migration.progress')}"></progress>`;
  const status = html`<section class="card" aria-live="polite"><p><strong>${stateText(t, job)}</strong> · ${when(job.details?.creationDate)}</p>
${running ? html`<p>${where}</p>${bar}<p class="intro">${t('migration.refreshes')}</p>` : ''}
<p>${soFar(t, job)}</p>${job.error?.message ? html`<p class="notice error" role="alert">${job.error.message}</p>` : ''}</section>`;
  return html`${status}${job.report ? reportSection(t, job.report) : ''}<p><a href="/ui/console/migration">${t('migration.back')}</a></p>`;
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
