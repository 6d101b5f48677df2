import { html, type Html } from '../../util/html.js';
import type { AppView, ChangeView, KeyView, ProjectView, RoleView } from './api-shapes.js';
import { changesTable } from './activity.js';
import { translateValue, type ConsoleTranslate } from './texts.js';
import { actionButton, checkbox, facts, field, formCard, postForm, removeControl, select, shownOnce, stateBadge, submit, table, textArea, when } from './widgets.js';

/** The console's projects: the list, one project (roles, applications), one application. */
export function projectsPage(t: ConsoleTranslate, csrf: string, projects: readonly ProjectView[]): Html {
  const form = postForm('/ui/console/projects', csrf, html`${field(t('common.name'), 'name', { required: true })}${submit(t('common.create'))}`);
  return html`${formCard(t('projects.new'), form)}
${table(
  [t('common.name'), t('common.id'), t('common.state'), t('common.created')],
  projects.map((p) => [html`<a href="/ui/console/projects/${encodeURIComponent(p.id)}">${p.name}</a>`, html`<code>${p.id}</code>`, stateBadge(t, p.state), when(p.details?.creationDate)]),
  t('common.none'),
)}`;
}

const OIDC_APP_TYPES = ['OIDC_APP_TYPE_WEB', 'OIDC_APP_TYPE_USER_AGENT', 'OIDC_APP_TYPE_NATIVE'];
const OIDC_AUTH_METHODS = ['OIDC_AUTH_METHOD_TYPE_BASIC', 'OIDC_AUTH_METHOD_TYPE_POST', 'OIDC_AUTH_METHOD_TYPE_NONE', 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT'];
const API_AUTH_METHODS = ['API_AUTH_METHOD_TYPE_BASIC', 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT'];

export interface ProjectPageData {
  project: ProjectView;
  roles: readonly RoleView[];
  apps: readonly AppView[];
  changes: readonly ChangeView[];
}

export function projectPage(t: ConsoleTranslate, csrf: string, data: ProjectPageData): Html {
  const { project } = data;
  const base = `/ui/console/projects/${encodeURIComponent(project.id)}`;
  const options = (values: readonly string[], prefix: string) => values.map((value) => ({ value, text: translateValue(t, prefix, value) }));
  const oidcForm = postForm(
    `${base}/apps/oidc`,
    csrf,
    html`${field(t('common.name'), 'name', { required: true })}${select(t('apps.appType'), 'appType', options(OIDC_APP_TYPES, 'apps.type'), 'OIDC_APP_TYPE_WEB')}${select(t('apps.authMethod'), 'authMethodType', options(OIDC_AUTH_METHODS, 'apps.auth'), 'OIDC_AUTH_METHOD_TYPE_BASIC')}${textArea(t('apps.redirectUris'), 'redirectUris')}${textArea(t('apps.postLogoutUris'), 'postLogoutRedirectUris')}${checkbox(t('apps.devMode'), 'devMode')}${submit(t('common.create'))}`,
  );
  const apiForm = postForm(
    `${base}/apps/api`,
    csrf,
    html`${field(t('common.name'), 'name', { required: true })}${select(t('apps.authMethod'), 'authMethodType', options(API_AUTH_METHODS, 'apps.auth'), 'API_AUTH_METHOD_TYPE_BASIC')}${submit(t('common.create'))}`,
  );
  const roleForm = postForm(
    `${base}/roles`,
    csrf,
    html`${field(t('projects.roleKey'), 'key', { required: true })}${field(t('projects.roleName'), 'displayName')}${field(t('projects.roleGroup'), 'group')}${submit(t('projects.addRole'))}`,
  );
  return html`<p><a href="/ui/console/projects">← ${t('nav.projects')}</a></p>
<section class="card">${facts([
    [t('common.id'), html`<code>${project.id}</code>`],
    [t('common.state'), stateBadge(t, project.state)],
    [t('common.created'), when(project.details?.creationDate)],
  ])}<div class="actions">${
    project.state === 'PROJECT_STATE_INACTIVE' ? actionButton(`${base}/reactivate`, csrf, t('users.reactivate')) : actionButton(`${base}/deactivate`, csrf, t('users.deactivate'))
  }${removeControl(`${base}/remove`, csrf, t)}</div><p class="intro">${t('projects.removeIntro')}</p></section>
<h2>${t('projects.apps')}</h2>
${formCard(t('apps.newOidc'), oidcForm)}${formCard(t('apps.newApi'), apiForm)}
${table(
  [t('common.name'), t('apps.clientId'), t('common.type'), t('common.state')],
  data.apps.map((a) => [
    html`<a href="${base}/apps/${encodeURIComponent(a.id)}">${a.name}</a>`,
    html`<code>${a.oidcConfig?.clientId ?? a.apiConfig?.clientId ?? ''}</code>`,
    a.oidcConfig ? translateValue(t, 'apps.type', a.oidcConfig.appType ?? 'OIDC_APP_TYPE_WEB') : 'API',
    stateBadge(t, a.state),
  ]),
  t('common.none'),
)}
<h2>${t('projects.roles')}</h2>
${formCard(t('projects.addRole'), roleForm)}
${table(
  [t('projects.roleKey'), t('projects.roleName'), t('projects.roleGroup'), ''],
  // The key travels in the form, not the path (a key may hold `/` or be `..`).
  data.roles.map((r) => [html`<code>${r.key}</code>`, r.displayName, r.group, removeControl(`${base}/roles/remove`, csrf, t, undefined, { key: r.key })]),
  t('common.none'),
)}
<h2>${t('users.changes')}</h2>
${changesTable(t, data.changes)}`;
}

export interface AppPageData {
  projectId: string;
  app: AppView;
  issuer: string;
  /** The app's keys, when it authenticates with them (private_key_jwt). */
  keys?: readonly KeyView[];
  /** What the last action made (a client secret, a key file), shown once. */
  once?: { label: string; value: string };
}

export function appPage(t: ConsoleTranslate, csrf: string, data: AppPageData): Html {
  const { app } = data;
  const base = `/ui/console/projects/${encodeURIComponent(data.projectId)}/apps/${encodeURIComponent(app.id)}`;
  const oidc = app.oidcConfig;
  const clientId = oidc?.clientId ?? app.apiConfig?.clientId ?? '';
  const authMethod = oidc?.authMethodType ?? app.apiConfig?.authMethodType ?? (oidc ? 'OIDC_AUTH_METHOD_TYPE_BASIC' : 'API_AUTH_METHOD_TYPE_BASIC');
  const usesSecret = authMethod.endsWith('_BASIC') || authMethod.endsWith('_POST');
  const keys = data.keys
    ? html`<h2>${t('users.keys')}</h2>
${table(
  [t('common.id'), t('users.expires'), ''],
  data.keys.map((k) => [html`<code>${k.id}</code>`, when(k.expirationDate), removeControl(`${base}/keys/remove`, csrf, t, undefined, { keyId: k.id })]),
  t('common.none'),
)}
<div class="actions">${actionButton(`${base}/keys`, csrf, t('users.newKey'))}</div>`
    : '';
  return html`${data.once ? shownOnce(t, data.once.label, data.once.value) : ''}
<p><a href="/ui/console/projects/${encodeURIComponent(data.projectId)}">← ${t('nav.projects')}</a></p>
<section class="card">${facts([
    [t('apps.clientId'), html`<code>${clientId}</code>`],
    [t('apps.issuer'), html`<code>${data.issuer}</code>`],
    [t('common.type'), oidc ? translateValue(t, 'apps.type', oidc.appType ?? 'OIDC_APP_TYPE_WEB') : 'API'],
    [t('apps.authMethod'), translateValue(t, 'apps.auth', authMethod)],
    ...(oidc
      ? ([
          [t('apps.redirectUris'), html`${(oidc.redirectUris ?? []).map((u) => html`<code>${u}</code><br>`)}`],
          [t('apps.postLogoutUris'), html`${(oidc.postLogoutRedirectUris ?? []).map((u) => html`<code>${u}</code><br>`)}`],
        ] as const)
      : []),
    [t('common.state'), stateBadge(t, app.state)],
    [t('common.created'), when(app.details?.creationDate)],
  ])}<div class="actions">${usesSecret ? postForm(`${base}/secret`, csrf, html`<button type="submit" class="secondary">${t('apps.newSecret')}</button>`, { className: 'inline' }) : ''}${removeControl(`${base}/remove`, csrf, t)}</div></section>
${keys}`;
}
