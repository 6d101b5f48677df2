import { html, type Html } from '../../util/html.js';
import type { MembershipView, OrgView } from './api-shapes.js';
import type { ConsoleTranslate } from './texts.js';
import { field, formCard, postForm, stateBadge, submit, table, when } from './widgets.js';

/** The console's overview (counts, readiness, the person's roles) and the organizations page. */
export interface HomeData {
  orgName: string;
  /** Undefined: the person may not read the org's users. */
  users: number | undefined;
  projects: number;
  ready: boolean;
  memberships: readonly MembershipView[];
  /** The instance's figures since the start (instance administrators only); null: metrics are off. */
  metrics?: { tokensIssued: number; introspections: number; signIns: number; signInFailures: number; lockouts: number; mails: number } | null;
}

function metricsCards(t: ConsoleTranslate, metrics: NonNullable<HomeData['metrics']>): Html {
  const card = (value: number, label: string) => html`<div class="card stat"><strong>${value}</strong>${label}</div>`;
  return html`<h2>${t('home.metrics')}</h2><div class="cards">${card(metrics.tokensIssued, t('home.tokens'))}${card(metrics.introspections, t('home.introspections'))}${card(metrics.signIns, t('home.signIns'))}${card(metrics.signInFailures, t('home.signInFailures'))}${card(metrics.lockouts, t('home.lockouts'))}${card(metrics.mails, t('home.mails'))}</div>`;
}

export function homePage(t: ConsoleTranslate, data: HomeData): Html {
  return html`<p class="intro">${t('home.intro', { org: data.orgName })}</p>
<div class="cards">
${data.users === undefined ? '' : html`<a class="card stat" href="/ui/console/users"><strong>${data.users}</strong>${t('home.users')}</a>`}
<a class="card stat" href="/ui/console/projects"><strong>${data.projects}</strong>${t('home.projects')}</a>
<div class="card stat"><strong>${data.ready ? '✓' : '✗'}</strong>${data.ready ? t('home.ready') : t('home.notReady', { reason: 'readyz' })}</div>
</div>
${data.metrics ? metricsCards(t, data.metrics) : data.metrics === null ? html`<p class="intro">${t('home.metricsOff')}</p>` : ''}
<section class="card"><h2>${t('home.start')}</h2><p>${t('home.start.text')}</p></section>
<h2>${t('home.roles')}</h2>
${table(
  [t('common.name'), t('common.type')],
  data.memberships.map((m) => [m.displayName ?? '', (m.roles ?? []).join(', ')]),
  t('common.none'),
)}`;
}

export function orgsPage(t: ConsoleTranslate, csrf: string, orgs: readonly OrgView[], currentId: string, canCreate: boolean): Html {
  const form = postForm('/ui/console/orgs', csrf, html`${field(t('common.name'), 'name', { required: true })}${submit(t('common.create'))}`);
  return html`${canCreate ? formCard(t('orgs.new'), form) : ''}
${table(
  [t('common.name'), t('orgs.domain'), t('common.state'), t('common.created'), ''],
  orgs.map((o) => [
    o.name,
    o.primaryDomain,
    stateBadge(t, o.state),
    when(o.details?.creationDate),
    o.id === currentId
      ? html`<span class="badge muted">${t('orgs.current')}</span>`
      : postForm('/ui/console/org', csrf, html`<input type="hidden" name="orgId" value="${o.id}"><button type="submit" class="secondary small">${t('orgs.use')}</button>`, { className: 'inline' }),
  ]),
  t('common.none'),
)}`;
}
