import { html, type Html } from '../../util/html.js';
import type { ChangeView, GrantView, KeyView, MetadataView, PatView, ProjectView, UserSessionView, UserView } from './api-shapes.js';
import type { ConsoleTranslate } from './texts.js';
import { actionButton, checkbox, facts, field, formCard, pager, postForm, removeControl, select, shownOnce, stateBadge, submit, table, when } from './widgets.js';
import { changesTable } from './activity.js';
import { factorsSection, type FactorsData } from './factors.js';

/** The console's users: the list with its search and the forms that add people and machine users; one user's page. */
export function displayName(user: UserView): string {
  return user.human?.profile?.displayName || user.machine?.name || user.userName;
}

/** One page of the users list: the page shown (1-based) and the count of all that match. */
export interface UsersListing {
  users: readonly UserView[];
  filter: string;
  page: number;
  pages: number;
  total: number;
}

export function usersPage(t: ConsoleTranslate, csrf: string, listing: UsersListing, open?: 'human' | 'machine'): Html {
  const { users, filter } = listing;
  const rows = users.map((u) => [
    html`<a href="/ui/console/users/${encodeURIComponent(u.id)}">${displayName(u)}</a>`,
    u.preferredLoginName ?? u.userName,
    u.human ? t('users.human') : t('users.machine'),
    stateBadge(t, u.state),
    when(u.details?.creationDate),
  ]);
  const human = postForm(
    '/ui/console/users/human',
    csrf,
    html`${field(t('users.userName'), 'userName', { required: true, autocomplete: 'off' })}${field(t('users.firstName'), 'firstName', { required: true })}${field(t('users.lastName'), 'lastName', { required: true })}${field(t('users.email'), 'email', { type: 'email', required: true })}${checkbox(t('users.emailVerified'), 'emailVerified')}${field(t('users.password'), 'password', { type: 'password', autocomplete: 'new-password', hint: t('users.passwordHint') })}${checkbox(t('users.changeRequired'), 'changeRequired', false)}${submit(t('common.create'))}`,
  );
  const machine = postForm(
    '/ui/console/users/machine',
    csrf,
    html`${field(t('users.userName'), 'userName', { required: true, autocomplete: 'off' })}${field(t('common.name'), 'name', { required: true })}${field(t('common.description'), 'description')}${submit(t('common.create'))}`,
  );
  return html`${formCard(t('users.newHuman'), human, open === 'human')}${formCard(t('users.newMachine'), machine, open === 'machine')}
<form method="get" action="/ui/console/users" class="filters" role="search">${field(t('users.filter'), 'q', { type: 'search', value: filter })}<button type="submit" class="secondary">${t('common.search')}</button></form>
${table([t('common.name'), t('users.loginName'), t('common.type'), t('common.state'), t('common.created')], rows, t('common.none'))}
${pager(t, listing.page, listing.pages, listing.total, (page) => `/ui/console/users?${new URLSearchParams({ ...(filter ? { q: filter } : {}), page: String(page) })}`)}`;
}

export interface UserPageData {
  user: UserView;
  pats?: readonly PatView[];
  /** A machine user's keys (key files). */
  keys?: readonly KeyView[];
  metadata: readonly MetadataView[];
  /** A person's browser sessions (a machine user has none). */
  sessions: readonly UserSessionView[];
  changes: readonly ChangeView[];
  /** The user's roles on the org's projects, and the projects a grant may name. */
  grants: readonly GrantView[];
  projects: readonly ProjectView[];
  /** A person's factors and links (a machine user has none). */
  factors?: FactorsData;
  /** What the last action handed out once (a PAT, a client secret). */
  once?: { label: string; value: string };
}

export function userPage(t: ConsoleTranslate, csrf: string, data: UserPageData): Html {
  const { user } = data;
  const base = `/ui/console/users/${encodeURIComponent(user.id)}`;
  const locked = user.state === 'USER_STATE_LOCKED';
  const inactive = user.state === 'USER_STATE_INACTIVE';
  const profile = facts([
    [t('common.id'), html`<code>${user.id}</code>`],
    [t('users.loginName'), user.preferredLoginName ?? user.userName],
    [t('common.state'), stateBadge(t, user.state)],
    ...(user.human
      ? ([
          [t('users.firstName'), user.human.profile?.firstName],
          [t('users.lastName'), user.human.profile?.lastName],
          [t('users.email'), `${user.human.email?.email ?? ''}${user.human.email?.isEmailVerified ? ' ✓' : ''}`],
          [t('users.phone'), `${user.human.phone?.phone ?? ''}${user.human.phone?.isPhoneVerified ? ' ✓' : ''}`],
        ] as const)
      : ([[t('common.description'), user.machine?.description]] as const)),
    [t('common.created'), when(user.details?.creationDate)],
  ]);
  const actions = html`<div class="actions">
${locked ? actionButton(`${base}/unlock`, csrf, t('users.unlock')) : inactive ? '' : actionButton(`${base}/lock`, csrf, t('users.lock'))}
${inactive ? actionButton(`${base}/reactivate`, csrf, t('users.reactivate')) : actionButton(`${base}/deactivate`, csrf, t('users.deactivate'))}
${removeControl(`${base}/remove`, csrf, t)}
</div>`;
  const contact = user.human
    ? html`${formCard(
        t('users.changeEmail'),
        postForm(
          `${base}/email`,
          csrf,
          html`${field(t('users.email'), 'email', { type: 'email', required: true, value: user.human.email?.email ?? '' })}${checkbox(t('users.emailVerified'), 'emailVerified')}${submit(t('common.save'))}`,
        ),
      )}${formCard(
        t('users.changePhone'),
        html`${postForm(
          `${base}/phone`,
          csrf,
          html`${field(t('users.phone'), 'phone', { type: 'tel', required: true, value: user.human.phone?.phone ?? '', placeholder: '+41 79 123 45 67' })}${checkbox(t('users.phoneVerified'), 'phoneVerified', user.human.phone?.isPhoneVerified === true)}${submit(t('common.save'))}`,
        )}${user.human.phone?.phone ? removeControl(`${base}/phone/remove`, csrf, t) : ''}`,
      )}`
    : '';
  const password = user.human
    ? formCard(
        t('users.setPassword'),
        postForm(
          `${base}/password`,
          csrf,
          html`${field(t('users.newPassword'), 'password', { type: 'password', required: true, autocomplete: 'new-password' })}${checkbox(t('users.changeRequired'), 'changeRequired', true)}${submit(t('common.save'))}`,
        ),
      )
    : '';
  const machine = user.machine
    ? html`<h2>${t('users.pats')}</h2>
${table(
  [t('common.id'), t('users.expires'), ''],
  (data.pats ?? []).map((p) => [html`<code>${p.id}</code>`, when(p.expirationDate), removeControl(`${base}/pats/${encodeURIComponent(p.id)}/remove`, csrf, t)]),
  t('common.none'),
)}
<div class="actions">${actionButton(`${base}/pats`, csrf, t('users.newPat'), 'primary')}${actionButton(`${base}/secret`, csrf, t('users.newSecret'))}</div>
<h2>${t('users.keys')}</h2>
<p class="intro">${t('users.keyRemovalHint')}</p>
${table(
  [t('common.id'), t('users.expires'), ''],
  (data.keys ?? []).map((k) => [html`<code>${k.id}</code>`, when(k.expirationDate), removeControl(`${base}/keys/remove`, csrf, t, undefined, { keyId: k.id })]),
  t('common.none'),
)}
<div class="actions">${actionButton(`${base}/keys`, csrf, t('users.newKey'))}</div>`
    : '';
  const sessions = user.human
    ? html`<h2>${t('users.sessions')}</h2>
${table(
  [t('common.created'), t('account.lastActive'), ''],
  data.sessions.map((session) => [when(session.creationDate), when(session.changeDate), removeControl(`${base}/sessions/end`, csrf, t, t('account.endSession'), { sessionId: session.id })]),
  t('common.none'),
)}`
    : '';
  const metadata = html`<h2>${t('metadata.title')}</h2>
${table(
  [t('metadata.key'), t('metadata.value'), ''],
  data.metadata.map((m) => [html`<code>${m.key}</code>`, metadataText(t, m.value), removeControl(`${base}/metadata/remove`, csrf, t, undefined, { key: m.key })]),
  t('common.none'),
)}
${formCard(
  t('metadata.set'),
  postForm(`${base}/metadata`, csrf, html`${field(t('metadata.key'), 'key', { required: true })}${field(t('metadata.value'), 'value', { required: true })}${submit(t('metadata.set'))}`),
)}`;
  return html`${data.once ? shownOnce(t, data.once.label, data.once.value) : ''}
<p><a href="/ui/console/users">← ${t('nav.users')}</a></p>
<section class="card"><h2>${t('users.profile')}</h2>${profile}${actions}</section>
${contact}${password}${machine}
${sessions}
${metadata}
<h2>${t('grants.title')}</h2>
${formCard(
  t('grants.add'),
  postForm(
    `${base}/grants`,
    csrf,
    html`${select(
      t('nav.projects'),
      'projectId',
      data.projects.map((p) => ({ value: p.id, text: p.name })),
    )}${field(t('grants.roles'), 'roleKeys', { hint: t('grants.rolesHint') })}${submit(t('grants.add'))}`,
  ),
)}
${table(
  [t('nav.projects'), t('projects.roles'), ''],
  data.grants.map((g) => [g.projectName ?? g.projectId, (g.roleKeys ?? []).join(', '), removeControl(`${base}/grants/${encodeURIComponent(g.id)}/remove`, csrf, t)]),
  t('common.none'),
)}
${data.factors ? factorsSection(t, csrf, base, data.factors, { passkeyLink: html`<div class="actions">${actionButton(`${base}/passkeys/link`, csrf, t('users.sendPasskeyLink'))}</div>` }) : ''}
<h2>${t('users.changes')}</h2>
${changesTable(t, data.changes)}`;
}

/** A metadata value as text when its bytes are UTF-8 text, else how many bytes it holds. */
function metadataText(t: ConsoleTranslate, base64: string): string {
  const bytes = Buffer.from(base64, 'base64');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return t('metadata.binary', { bytes: String(bytes.length) });
  }
  // Control characters other than tab and line breaks make it binary too.
  const control = (c: string) => {
    const n = c.codePointAt(0)!;
    return (n < 32 && n !== 9 && n !== 10 && n !== 13) || n === 127;
  };
  return [...text].some(control) ? t('metadata.binary', { bytes: String(bytes.length) }) : text;
}
