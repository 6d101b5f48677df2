import { html, type Html } from '../../util/html.js';
import type { ConsoleTranslate } from './texts.js';
import { actionButton, table } from './widgets.js';

/** The signing keys page: the published public keys (the JWKS) and rotation now. */
export interface PublishedKey {
  kid?: string;
  alg?: string;
  kty?: string;
  use?: string;
}

export function keysPage(t: ConsoleTranslate, csrf: string, keys: readonly PublishedKey[]): Html {
  return html`<p class="intro">${t('keys.intro')}</p>
${table(
  [t('keys.kid'), t('keys.alg'), t('common.type')],
  keys.map((k) => [html`<code>${k.kid ?? ''}</code>`, k.alg, `${k.kty ?? ''} ${k.use ?? ''}`]),
  t('common.none'),
)}
<div class="actions">${actionButton('/ui/console/keys/rotate', csrf, t('keys.rotate'), 'primary')}</div>`;
}
