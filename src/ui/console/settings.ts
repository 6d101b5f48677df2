import { html, type Html } from '../../util/html.js';
import type { ConsoleTranslate } from './texts.js';
import { actionButton, checkbox, field, formCard, postForm, removeControl, submit, table, textArea } from './widgets.js';

/**
 * The instance's settings (its one feature, the security policy, dynamic client registration) and
 * its SMTP configurations: each a form over the admin API, saved as a whole.
 */
export interface InstanceSettingsData {
  tokenExchange: boolean;
  security: { enableIframeEmbedding?: boolean; allowedOrigins?: string[]; enableImpersonation?: boolean };
  registration: { enabled?: boolean; allowUnauthenticated?: boolean; orgId?: string; projectId?: string; maxClients?: number; registrationsPerAddressPerHour?: number };
}

export function settingsPage(t: ConsoleTranslate, csrf: string, data: InstanceSettingsData): Html {
  const r = data.registration;
  return html`<section class="card"><h2>${t('settings.features')}</h2>${postForm(
    '/ui/console/settings/features',
    csrf,
    html`${checkbox(t('settings.tokenExchange'), 'oidcTokenExchange', data.tokenExchange)}${submit(t('common.save'))}`,
  )}</section>
<section class="card"><h2>${t('settings.security')}</h2>${postForm(
    '/ui/console/settings/security',
    csrf,
    html`${checkbox(t('settings.iframe'), 'enableIframeEmbedding', data.security.enableIframeEmbedding === true)}${textArea(t('settings.origins'), 'allowedOrigins', (data.security.allowedOrigins ?? []).join('\n'))}${checkbox(t('settings.impersonation'), 'enableImpersonation', data.security.enableImpersonation === true)}${submit(t('common.save'))}`,
  )}</section>
<section class="card"><h2>${t('settings.registration')}</h2>${postForm(
    '/ui/console/settings/registration',
    csrf,
    html`${checkbox(t('settings.registrationEnabled'), 'enabled', r.enabled === true)}${checkbox(t('settings.unauthenticated'), 'allowUnauthenticated', r.allowUnauthenticated === true)}${field(t('settings.orgId'), 'orgId', { value: r.orgId ?? '' })}${field(t('settings.projectId'), 'projectId', { value: r.projectId ?? '' })}${field(t('settings.maxClients'), 'maxClients', { value: String(r.maxClients ?? '') })}${field(t('settings.perAddress'), 'registrationsPerAddressPerHour', { value: String(r.registrationsPerAddressPerHour ?? '') })}${submit(t('common.save'))}`,
  )}</section>`;
}

export interface SmtpView {
  id: string;
  description?: string;
  senderAddress?: string;
  senderName?: string;
  host?: string;
  user?: string;
  tls?: boolean;
  state?: string;
}

export function smtpPage(t: ConsoleTranslate, csrf: string, configs: readonly SmtpView[]): Html {
  const add = postForm(
    '/ui/console/smtp',
    csrf,
    html`${field(t('common.description'), 'description')}${field(t('smtp.host'), 'host', { required: true, placeholder: 'smtp.example.com:587' })}${checkbox('TLS', 'tls', true)}${field(t('smtp.user'), 'user', { autocomplete: 'off' })}${field(t('smtp.password'), 'password', { type: 'password', autocomplete: 'new-password' })}${field(t('smtp.sender'), 'senderAddress', { type: 'email', required: true })}${field(t('smtp.senderName'), 'senderName')}${submit(t('common.create'))}`,
  );
  const rows = configs.map((c) => {
    const base = `/ui/console/smtp/${encodeURIComponent(c.id)}`;
    const active = c.state === 'SMTP_CONFIG_ACTIVE';
    return [
      html`${c.description || c.host || c.id}<br><small>${[c.host, c.user, c.tls ? 'TLS' : ''].filter((part) => part).join(' · ')}</small>`,
      html`${c.senderName ?? ''} &lt;${c.senderAddress ?? ''}&gt;`,
      html`<span class="badge ${active ? 'ok' : 'muted'}">${active ? t('smtp.active') : t('smtp.inactive')}</span>`,
      html`<div class="actions">${active ? actionButton(`${base}/deactivate`, csrf, t('smtp.deactivate')) : actionButton(`${base}/activate`, csrf, t('smtp.activate'))}${postForm(`${base}/test`, csrf, html`<input type="email" name="receiverAddress" required placeholder="${t('smtp.testTo')}" aria-label="${t('smtp.testTo')}"><button type="submit" class="secondary small">${t('smtp.test')}</button>`, { className: 'inline' })}${removeControl(`${base}/remove`, csrf, t)}</div>`,
    ];
  });
  return html`${formCard(t('smtp.new'), add)}${table([t('common.name'), t('smtp.sender'), t('common.state'), t('common.actions')], rows, t('common.none'))}`;
}
