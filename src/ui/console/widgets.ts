import { html, type Html } from '../../util/html.js';
import { type ConsoleTranslate, translateValue } from './texts.js';

/**
 * The console's building blocks: forms that post with the page's CSRF token, tables, fields and
 * the "shown once" box. Plain HTML: every action works without JavaScript.
 */
export type Cell = Html | string | number | undefined;

/** A form posting to `action` with the CSRF token; `body` holds its fields and buttons. */
export function postForm(action: string, csrf: string, body: Html | readonly Html[], options: { className?: string; id?: string } = {}): Html {
  return html`<form method="post" action="${action}"${options.className ? html` class="${options.className}"` : ''}${options.id ? html` id="${options.id}"` : ''}><input type="hidden" name="csrf" value="${csrf}">${body}</form>`;
}

/** One button that posts to `action` (an action on the object the page shows). */
export function actionButton(action: string, csrf: string, label: string, variant: 'primary' | 'secondary' | 'danger' = 'secondary'): Html {
  return postForm(action, csrf, html`<button type="submit" class="${variant}">${label}</button>`, { className: 'inline' });
}

/**
 * A removal behind a second click (a disclosure, no script): "Remove…", then "Remove for good". `fields` name what is removed in the form rather than in the
 * path, for values a caller chose (a metadata key, an imported key id), which a path could not hold
 * safely: a browser resolves `..` there, percent-encoded or not.
 */
export function removeControl(action: string, csrf: string, t: ConsoleTranslate, label = t('common.remove'), fields: Record<string, string> = {}): Html {
  const hidden = Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return html`<details class="remove"><summary>${label}</summary>${postForm(action, csrf, html`${hidden}<button type="submit" class="danger">${t('common.removeConfirm')}</button>`, { className: 'inline' })}</details>`;
}

export function field(label: string, name: string, options: { type?: string; value?: string; required?: boolean; hint?: string; autocomplete?: string; placeholder?: string } = {}): Html {
  const id = `f-${name}`;
  return html`<div class="field"><label for="${id}">${label}</label><input id="${id}" name="${name}" type="${options.type ?? 'text'}" value="${options.value ?? ''}"${options.required ? html` required` : ''}${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : ''}${options.placeholder ? html` placeholder="${options.placeholder}"` : ''}>${options.hint ? html`<small>${options.hint}</small>` : ''}</div>`;
}

export function textArea(label: string, name: string, value = ''): Html {
  const id = `f-${name}`;
  return html`<div class="field"><label for="${id}">${label}</label><textarea id="${id}" name="${name}" rows="3">${value}</textarea></div>`;
}

export function checkbox(label: string, name: string, checked = false): Html {
  return html`<label class="check"><input type="checkbox" name="${name}" value="true"${checked ? html` checked` : ''}> ${label}</label>`;
}

export function select(label: string, name: string, options: readonly { value: string; text: string }[], selected?: string): Html {
  const id = `f-${name}`;
  return html`<div class="field"><label for="${id}">${label}</label><select id="${id}" name="${name}">${options.map((o) => html`<option value="${o.value}"${o.value === selected ? html` selected` : ''}>${o.text}</option>`)}</select></div>`;
}

export function submit(label: string): Html {
  return html`<button type="submit" class="primary">${label}</button>`;
}

export function table(headers: readonly string[], rows: readonly (readonly Cell[])[], empty: string): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<table><thead><tr>${headers.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cell ?? ''}</td>`)}</tr>`)}</tbody></table>`;
}

/** Label/value pairs of an object's page. */
export function facts(pairs: readonly (readonly [string, Cell])[]): Html {
  return html`<dl class="facts">${pairs.map(([k, v]) => html`<dt>${k}</dt><dd>${v ?? ''}</dd>`)}</dl>`;
}

export function stateBadge(t: ConsoleTranslate, state: string | undefined): Html {
  const value = state ?? '';
  const tone = /ACTIVE$/.test(value) && !/INACTIVE$/.test(value) ? 'ok' : /LOCKED|INACTIVE/.test(value) ? 'warn' : 'muted';
  return html`<span class="badge ${tone}">${translateValue(t, 'state', value)}</span>`;
}

/** A secret, key or token the API returned once: shown in full, with the warning. */
export function shownOnce(t: ConsoleTranslate, label: string, value: string): Html {
  return html`<section class="once" role="status"><h3>${label}</h3><p>${t('common.shownOnce')}</p><pre class="secret" tabindex="0">${value}</pre></section>`;
}

/** A collapsible card with a form (creating something), open when `open`. */
export function formCard(title: string, form: Html, open = false): Html {
  return html`<details class="card form-card"${open ? html` open` : ''}><summary>${title}</summary>${form}</details>`;
}

/** An RFC 3339 time as the page shows it: date and minutes, in UTC. */
export function when(rfc3339: string | undefined): string {
  if (!rfc3339) return '';
  return rfc3339.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
}

/** Links to a list's previous and next pages (1-based), and where this one stands; nothing for one page. */
export function pager(t: ConsoleTranslate, page: number, pages: number, total: number, hrefOf: (page: number) => string): Html | string {
  if (pages <= 1) return '';
  const previous = page > 1 ? html`<a href="${hrefOf(page - 1)}" rel="prev">← ${t('common.previous')}</a>` : '';
  const next = page < pages ? html`<a href="${hrefOf(page + 1)}" rel="next">${t('common.next')} →</a>` : '';
  return html`<nav class="actions" aria-label="pages">${previous}<span>${t('common.page', { page: String(page), pages: String(pages), total: String(total) })}</span>${next}</nav>`;
}
