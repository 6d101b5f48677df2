import { html, type Html } from '../../util/html.js';
import type { MemberView, UserView } from './api-shapes.js';
import type { ConsoleTranslate } from './texts.js';
import { displayName } from './users.js';
import { formCard, postForm, removeControl, select, submit, table, when } from './widgets.js';

/** Who holds roles in a scope (the current org, or the instance), and the forms that change it. */
export interface MembersPageData {
  /** Where the page's forms post: `/ui/console/members` or `/ui/console/instance/members`. */
  base: string;
  members: readonly MemberView[];
  /** The roles this scope gives out. */
  roles: readonly string[];
  /** The people and machine users who may be made members (the current org's). */
  candidates: readonly UserView[];
}

/** A checkbox per role, named `roles`, so a form sends every one ticked. */
function roleChoices(roles: readonly string[], ticked: readonly string[]): Html {
  return html`<fieldset class="field"><div>${roles.map((role) => html`<label class="check"><input type="checkbox" name="roles" value="${role}"${ticked.includes(role) ? html` checked` : ''}> <code>${role}</code></label> `)}</div></fieldset>`;
}

export function membersPage(t: ConsoleTranslate, csrf: string, data: MembersPageData): Html {
  const memberIds = new Set(data.members.map((m) => m.userId));
  const candidates = data.candidates.filter((u) => !memberIds.has(u.id)).map((u) => ({ value: u.id, text: `${displayName(u)} (${u.preferredLoginName ?? u.userName})` }));
  const add = postForm(data.base, csrf, html`${select(t('members.user'), 'userId', candidates)}<p>${t('members.roles')}</p>${roleChoices(data.roles, [])}${submit(t('members.add'))}`);
  const rows = data.members.map((m) => {
    const path = `${data.base}/${encodeURIComponent(m.userId)}`;
    const change = html`<details class="remove"><summary>${t('members.changeRoles')}</summary>${postForm(path, csrf, html`${roleChoices(data.roles, m.roles)}${submit(t('common.save'))}`)}</details>`;
    return [
      html`${m.displayName ?? m.userId}<br><small>${m.preferredLoginName ?? ''}</small>`,
      html`${m.roles.map((r) => html`<code>${r}</code> `)}`,
      when(m.details?.creationDate),
      html`${change}${removeControl(`${path}/remove`, csrf, t)}`,
    ];
  });
  return html`${candidates.length > 0 ? formCard(t('members.add'), add) : ''}
${table([t('members.user'), t('members.roles'), t('common.created'), ''], rows, t('common.none'))}`;
}
