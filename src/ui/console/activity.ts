import { html, type Html } from '../../util/html.js';
import type { ChangeView, EventView } from './api-shapes.js';
import type { ConsoleTranslate } from './texts.js';
import { field, table, when } from './widgets.js';

/** The activity log's page (ListEvents with its filters, paged by sequence) and an object's changes. */
export interface ActivityFilters {
  type: string;
  editor: string;
  aggregate: string;
}

function who(t: ConsoleTranslate, event: EventView): Html | string {
  const editor = event.editor ?? {};
  if (!editor.userId) return editor.service === 'system' || editor.service === 'cli' ? t('activity.system') : html`<em>${t('activity.anonymous')}</em>`;
  return html`<a href="/ui/console/users/${encodeURIComponent(editor.userId)}">${editor.displayName || editor.userId}</a> <small>${editor.service ?? ''}</small>`;
}

function payloadText(payload: unknown): string {
  if (!payload || typeof payload !== 'object' || Object.keys(payload).length === 0) return '';
  const text = JSON.stringify(payload);
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}

export function activityPage(t: ConsoleTranslate, events: readonly EventView[], filters: ActivityFilters, older?: string): Html {
  const rows = events.map((e) => [
    when(e.creationDate),
    html`<code>${e.type?.type ?? ''}</code>${payloadText(e.payload) ? html`<br><small>${payloadText(e.payload)}</small>` : ''}`,
    who(t, e),
    html`${e.aggregate?.type?.type ?? ''} <code>${e.aggregate?.id ?? ''}</code>`,
    e.editor?.address ?? '',
  ]);
  const keep = new URLSearchParams({
    ...(filters.type ? { type: filters.type } : {}),
    ...(filters.editor ? { editor: filters.editor } : {}),
    ...(filters.aggregate ? { aggregate: filters.aggregate } : {}),
  });
  return html`<p class="intro">${t('activity.intro')}</p>
<form method="get" action="/ui/console/activity" class="filters" role="search">${field(t('activity.filterType'), 'type', { value: filters.type, placeholder: 'user.human.signed.in' })}${field(t('activity.filterEditor'), 'editor', { value: filters.editor })}${field(t('activity.filterAggregate'), 'aggregate', { value: filters.aggregate })}<button type="submit" class="secondary">${t('common.search')}</button></form>
${table([t('activity.when'), t('activity.what'), t('activity.who'), t('activity.object'), t('activity.where')], rows, t('common.none'))}
${older ? html`<p><a href="/ui/console/activity?${keep.toString()}${keep.size > 0 ? '&' : ''}before=${older}">${t('common.more')} →</a></p>` : ''}`;
}

export function changesTable(t: ConsoleTranslate, changes: readonly ChangeView[]): Html {
  return table(
    [t('activity.when'), t('activity.what'), t('activity.who')],
    changes.map((c) => [when(c.changeDate), html`<code>${(c.eventType?.key ?? '').replace(/^EventTypes\./, '')}</code>`, c.editorId ? c.editorDisplayName || c.editorId : t('activity.system')]),
    t('common.none'),
  );
}
