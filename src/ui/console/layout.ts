import { html, type Html } from '../../util/html.js';
import type { Locale } from '../i18n.js';
import { CONSOLE_STYLESHEET_PATH } from './styles.js';
import type { ConsoleTextKey, ConsoleTranslate } from './texts.js';
import { postForm } from './widgets.js';

/**
 * The console's frame around every page: the header (the org worked in, who is signed in, sign
 * out), the navigation (instance areas only for instance administrators) and a notice.
 */
export type NavKey =
  | 'members'
  | 'instanceMembers'
  | 'migration'
  | 'idps'
  | 'instanceIdps'
  | 'settings'
  | 'smtp'
  | 'account'
  | 'home'
  | 'users'
  | 'projects'
  | 'policies'
  | 'activity'
  | 'orgs'
  | 'defaults'
  | 'keys';

export interface ConsoleFrame {
  locale: Locale;
  t: ConsoleTranslate;
  csrf: string;
  /** The signed-in person's display name. */
  userName: string;
  org: { id: string; name: string };
  /** The orgs they may switch to (the current one included). */
  orgs: readonly { id: string; name: string }[];
  /** An instance role: the instance's areas show. */
  instance: boolean;
  /** The navigation entry of the page shown. */
  current: NavKey;
}

export interface Notice {
  kind: 'error' | 'info';
  text: string;
  /** A link that answers it (sign in again). */
  action?: { href: string; text: string };
}

const NAV: readonly { key: NavKey; href: string; text: ConsoleTextKey; instance?: true }[] = [
  { key: 'home', href: '/ui/console', text: 'nav.home' },
  { key: 'users', href: '/ui/console/users', text: 'nav.users' },
  { key: 'members', href: '/ui/console/members', text: 'nav.members' },
  { key: 'projects', href: '/ui/console/projects', text: 'nav.projects' },
  { key: 'policies', href: '/ui/console/policies', text: 'nav.policies' },
  { key: 'idps', href: '/ui/console/idps', text: 'nav.idps' },
  // ListEvents is the instance's owners' and viewers' (`events.read`).
  { key: 'activity', href: '/ui/console/activity', text: 'nav.activity', instance: true },
  { key: 'orgs', href: '/ui/console/orgs', text: 'nav.orgs' },
  { key: 'defaults', href: '/ui/console/defaults', text: 'nav.defaults', instance: true },
  { key: 'instanceIdps', href: '/ui/console/instance/idps', text: 'nav.instanceIdps', instance: true },
  { key: 'instanceMembers', href: '/ui/console/instance/members', text: 'nav.instanceMembers', instance: true },
  { key: 'settings', href: '/ui/console/settings', text: 'nav.settings', instance: true },
  { key: 'smtp', href: '/ui/console/smtp', text: 'nav.smtp', instance: true },
  { key: 'keys', href: '/ui/console/keys', text: 'nav.keys', instance: true },
  { key: 'migration', href: '/ui/console/migration', text: 'nav.migration', instance: true },
  { key: 'account', href: '/ui/console/me', text: 'nav.account' },
];

export function noticeBox(notice: Notice | undefined): Html | string {
  if (!notice) return '';
  const action = notice.action ? html` <a class="button" href="${notice.action.href}">${notice.action.text}</a>` : '';
  return notice.kind === 'error' ? html`<p class="notice error" role="alert">${notice.text}${action}</p>` : html`<p class="notice info" role="status">${notice.text}${action}</p>`;
}

function orgSwitcher(frame: ConsoleFrame): Html {
  const { t } = frame;
  if (frame.orgs.length <= 1) return html`<span class="org-name" title="${frame.org.id}">${frame.org.name}</span>`;
  return postForm(
    '/ui/console/org',
    frame.csrf,
    html`<label class="sr" for="org-switch">${t('org.current')}</label><select id="org-switch" name="orgId">${frame.orgs.map((o) => html`<option value="${o.id}"${o.id === frame.org.id ? html` selected` : ''}>${o.name}</option>`)}</select><button type="submit" class="secondary small">${t('org.switch')}</button>`,
    { className: 'org-switch' },
  );
}

function head(locale: Locale, t: ConsoleTranslate, title: string): Html {
  return html`<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · ${t('console.title')} · Sesame</title>
<link rel="stylesheet" href="${CONSOLE_STYLESHEET_PATH}">
</head>`;
}

export function consolePage(frame: ConsoleFrame, title: string, body: Html, notice?: Notice): string {
  const { t } = frame;
  return html`${head(frame.locale, t, title)}
<body class="console">
<header class="top">
<a class="brand" href="/ui/console"><span class="logo" aria-hidden="true">◆</span><span>Sesame</span> <small>${t('console.title')}</small></a>
<div class="org">${orgSwitcher(frame)}</div>
<div class="me"><span>${t('signedIn', { name: frame.userName })}</span>${postForm('/ui/console/logout', frame.csrf, html`<button type="submit" class="secondary small">${t('signOut')}</button>`, { className: 'inline' })}</div>
</header>
<div class="frame">
<nav class="side" aria-label="${t('console.title')}"><ul>${NAV.filter((item) => !item.instance || frame.instance).map(
    (item) => html`<li><a href="${item.href}"${item.key === frame.current ? html` aria-current="page"` : ''}>${t(item.text)}</a></li>`,
  )}</ul></nav>
<main class="content">
<h1>${title}</h1>
${noticeBox(notice)}
${body}
</main>
</div>
</body>
</html>
`.text;
}

/** A page outside the signed-in frame (signed out, a failed sign-in). */
export function standalonePage(locale: Locale, t: ConsoleTranslate, title: string, body: Html): string {
  return html`${head(locale, t, title)}
<body class="console standalone">
<main class="content narrow"><a class="brand" href="/ui/console"><span class="logo" aria-hidden="true">◆</span><span>Sesame</span> <small>${t('console.title')}</small></a>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.text;
}
