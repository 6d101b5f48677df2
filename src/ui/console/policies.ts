import { html, type Html } from '../../util/html.js';
import type { ConsoleTranslate } from './texts.js';
import { checkbox, field, postForm, removeControl, select, submit } from './widgets.js';

/**
 * The policies pages: which policies govern the org (its own or the instance's default), and one
 * policy's form. Fields are named as the API names them (the form is read from its schema).
 */
export type PolicyField =
  | { name: string; kind: 'boolean'; value: boolean; optional?: boolean }
  | { name: string; kind: 'number' | 'text'; value: string; optional?: boolean }
  | { name: string; kind: 'enum'; options: string[]; value: string; optional?: boolean }
  | { name: string; kind: 'list'; value: unknown; optional?: boolean };

export const POLICY_PAGES = ['login', 'lockout', 'password-complexity', 'privacy', 'label', 'domain'] as const;
export type PolicyPage = (typeof POLICY_PAGES)[number];

/** `maxPasswordAttempts` → "Max password attempts". */
function words(name: string): string {
  const spaced = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

export function policiesIndex(t: ConsoleTranslate, base: string, own: ReadonlyMap<PolicyPage, boolean>): Html {
  return html`<p class="intro">${t(base.includes('defaults') ? 'policies.defaultsIntro' : 'policies.intro')}</p>
<ul class="links">${POLICY_PAGES.map(
    (page) =>
      html`<li><a href="${base}/${page}">${t(`policies.${page}`)}</a>${own.has(page) ? html` <span class="badge ${own.get(page) ? 'ok' : 'muted'}">${own.get(page) ? t('policies.own') : t('policies.default')}</span>` : ''}</li>`,
  )}</ul>`;
}

/**
 * The label policy's own part: it is edited as a preview and put in force by activating it; its
 * logo is uploaded (the assets API), shown here as the preview has it.
 */
export function labelExtras(t: ConsoleTranslate, csrf: string, action: string, logoUrl: string | undefined): Html {
  return html`<section class="card"><h2>${t('policies.labelActivate')}</h2><p class="intro">${t('policies.labelActivateIntro')}</p>
<div class="actions">${postForm(`${action}/activate`, csrf, html`<button type="submit" class="primary">${t('policies.labelActivate')}</button>`, { className: 'inline' })}</div></section>
<section class="card"><h2>${t('policies.labelLogo')}</h2>${logoUrl ? html`<p><img class="logo-preview" src="${logoUrl}" alt="${t('policies.labelLogo')}" height="48"></p>` : ''}
<form method="post" action="${action}/logo" enctype="multipart/form-data"><input type="hidden" name="csrf" value="${csrf}">
<div class="field"><label for="f-file">${t('policies.labelLogoFile')}</label><input id="f-file" name="file" type="file" accept="image/png,image/jpeg,image/gif,image/svg+xml" required></div>${submit(t('policies.labelUpload'))}</form></section>`;
}

export function policyForm(t: ConsoleTranslate, csrf: string, action: string, fields: readonly PolicyField[], options: { isDefault: boolean; org: boolean }): Html {
  const inputs = fields.map((f) => {
    if (f.kind === 'boolean') return checkbox(words(f.name), f.name, f.value);
    if (f.kind === 'enum')
      return select(
        words(f.name),
        f.name,
        f.options.map((o) => ({ value: o, text: o })),
        f.value,
      );
    if (f.kind === 'list') return html``;
    return field(words(f.name), f.name, { value: f.value, ...(f.optional ? { hint: t('policies.optional') } : {}) });
  });
  const intro = !options.org ? t('policies.defaultsIntro') : options.isDefault ? t('policies.isDefault') : t('policies.isOwn');
  return html`<p class="intro">${intro}</p>
${postForm(action, csrf, html`${inputs}${submit(t('common.save'))}`, { className: 'card' })}
${options.org && !options.isDefault ? html`<div class="actions">${removeControl(`${action}/reset`, csrf, t, t('policies.reset'))}</div>` : ''}`;
}
