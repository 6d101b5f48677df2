import { html, type Html } from '../../util/html.js';
import type { FactorView, LinkView, PasskeyView } from './api-shapes.js';
import type { ConsoleTranslate } from './texts.js';
import { removeControl, table } from './widgets.js';

/**
 * A person's second factors, passkeys and linked accounts, each with its removal: on the account
 * page (the person's own, `base` /ui/console/me) and on a user's page (an administrator resetting them).
 */
export interface FactorsData {
  factors: readonly FactorView[];
  passkeys: readonly PasskeyView[];
  links: readonly LinkView[];
}

function factorRow(t: ConsoleTranslate, csrf: string, base: string, f: FactorView): Html[] {
  if (f.otp) return [html`${t('factors.otp')}`, removeControl(`${base}/factors/otp/remove`, csrf, t)];
  if (f.otpEmail) return [html`${t('factors.otpEmail')}`, removeControl(`${base}/factors/otp_email/remove`, csrf, t)];
  return [html`${t('factors.u2f')} <small>${f.u2f?.name ?? ''}</small>`, removeControl(`${base}/factors/u2f/${encodeURIComponent(f.u2f?.id ?? '')}/remove`, csrf, t)];
}

export function factorsSection(t: ConsoleTranslate, csrf: string, base: string, data: FactorsData, extra: { otp?: Html | string; passkeyLink?: Html } = {}): Html {
  return html`<h2>${t('factors.title')}</h2>
<p class="intro">${t('factors.intro')}</p>
${table(
  [t('common.type'), ''],
  data.factors.map((f) => factorRow(t, csrf, base, f)),
  t('common.none'),
)}
${extra.otp ?? ''}
<h2>${t('factors.passkeys')}</h2>
${table(
  [t('common.name'), ''],
  data.passkeys.map((p) => [p.name || p.id, removeControl(`${base}/passkeys/${encodeURIComponent(p.id)}/remove`, csrf, t)]),
  t('common.none'),
)}
${extra.passkeyLink ?? ''}
<h2>${t('factors.links')}</h2>
${table(
  [t('factors.provider'), t('users.userName'), ''],
  data.links.map((l) => [l.idpName ?? l.idpId, l.providedUserName || l.providedUserId, removeControl(`${base}/links/remove`, csrf, t, undefined, { idpId: l.idpId, linkedUserId: l.providedUserId })]),
  t('common.none'),
)}`;
}
