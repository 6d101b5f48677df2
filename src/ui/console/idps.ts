import { html, type Html } from '../../util/html.js';
import type { ConsoleTranslate } from './texts.js';
import { actionButton, checkbox, field, formCard, postForm, removeControl, submit, table, textArea } from './widgets.js';

/**
 * Identity providers of an org (its own and the instance's) or of the instance: the list, whether
 * each is offered at the login (the login policy's list), a generic OIDC provider added, removed.
 */
export interface ProviderView {
  id: string;
  name?: string;
  owner?: string;
  type?: string;
}

export interface IdpsPageData {
  base: string;
  providers: readonly ProviderView[];
  offered: ReadonlySet<string>;
  /** The owner type this page adds and removes (`IDP_OWNER_TYPE_ORG` or `IDP_OWNER_TYPE_SYSTEM`). */
  ownerType: string;
}

export function idpsPage(t: ConsoleTranslate, csrf: string, data: IdpsPageData): Html {
  const form = postForm(
    data.base,
    csrf,
    html`${field(t('common.name'), 'name', { required: true })}${field(t('idps.issuer'), 'issuer', { required: true, placeholder: 'https://accounts.example.com' })}${field(t('apps.clientId'), 'clientId', { required: true })}${field(t('apps.clientSecret'), 'clientSecret', { type: 'password', required: true, autocomplete: 'off' })}${textArea(t('idps.scopes'), 'scopes', 'openid\nprofile\nemail')}${checkbox(t('idps.pkce'), 'usePkce', true)}${checkbox(t('idps.linking'), 'isLinkingAllowed', true)}${checkbox(t('idps.creation'), 'isCreationAllowed', true)}${checkbox(t('idps.autoUpdate'), 'isAutoUpdate')}${submit(t('common.create'))}`,
  );
  const rows = data.providers.map((p) => {
    const mine = p.owner === data.ownerType;
    const base = `${data.base}/${encodeURIComponent(p.id)}`;
    const offered = data.offered.has(p.id);
    return [
      html`${p.name ?? p.id}<br><small><code>${p.id}</code></small>`,
      (p.type ?? '').replace(/^IDP_TYPE_/, ''),
      p.owner === 'IDP_OWNER_TYPE_SYSTEM' ? t('idps.instance') : t('idps.org'),
      html`<div class="actions">${offered ? html`<span class="badge ok">${t('idps.offered')}</span>${actionButton(`${base}/withdraw`, csrf, t('idps.withdraw'))}` : actionButton(`${base}/offer`, csrf, t('idps.offer'))}${mine ? removeControl(`${base}/remove`, csrf, t) : ''}</div>`,
    ];
  });
  return html`<p class="intro">${t('idps.intro')}</p>${formCard(t('idps.new'), form)}${table([t('common.name'), t('common.type'), t('idps.owner'), t('common.actions')], rows, t('common.none'))}`;
}
