import { html, type Html } from '../../util/html.js';
import type { UserView } from './api-shapes.js';
import type { ConsoleTranslate } from './texts.js';
import { actionButton, facts, field, formCard, postForm, submit, table, when } from './widgets.js';
import { factorsSection, type FactorsData } from './factors.js';

/** The signed-in person's own page: who they are, a new password, their browser sessions (ended here). */
export interface SessionView {
  sessionId: string;
  authTime?: string;
  details?: { creationDate?: string; changeDate?: string };
}

/** An authenticator app being set up: the key as a QR code (a data URL) and as text. */
export interface OtpSetup {
  qrCode: string;
  secret: string;
  /** The otpauth:// URI, carried in the form so that a mistyped code shows the same setup again. */
  url: string;
}

/** The TOTP part of the person's factors: a setup under way, or the button that starts one (none while they have one). */
function otpPanel(t: ConsoleTranslate, csrf: string, factors: FactorsData, setup: OtpSetup | undefined): Html | string {
  if (setup) {
    return html`<section class="once" role="status"><h3>${t('account.otpSetup')}</h3><p>${t('account.otpScan')}</p>
<img class="qr" src="${setup.qrCode}" alt="${t('account.otpKey')}" width="200" height="200">
<p>${t('account.otpKey')}: <code>${setup.secret}</code></p>
${postForm(
  '/ui/console/me/otp/verify',
  csrf,
  html`<input type="hidden" name="url" value="${setup.url}"><input type="hidden" name="secret" value="${setup.secret}">${field(t('account.otpCode'), 'code', { required: true, autocomplete: 'one-time-code' })}${submit(t('account.otpConfirm'))}`,
)}</section>`;
  }
  if (factors.factors.some((f) => f.otp)) return '';
  return html`<div class="actions">${actionButton('/ui/console/me/otp', csrf, t('account.otpSetup'))}</div>`;
}

export function accountPage(
  t: ConsoleTranslate,
  csrf: string,
  user: UserView,
  sessions: readonly SessionView[],
  currentSessionId: string | undefined,
  factors: FactorsData,
  otpSetup?: OtpSetup,
): Html {
  const password = postForm(
    '/ui/console/me/password',
    csrf,
    html`<input type="text" name="username" value="${user.preferredLoginName ?? user.userName}" autocomplete="username" hidden>${field(t('account.oldPassword'), 'oldPassword', { type: 'password', required: true, autocomplete: 'current-password' })}${field(t('users.newPassword'), 'newPassword', { type: 'password', required: true, autocomplete: 'new-password', hint: t('account.passwordHint') })}${submit(t('common.save'))}`,
  );
  return html`<section class="card">${facts([
    [t('users.loginName'), user.preferredLoginName ?? user.userName],
    [t('users.firstName'), user.human?.profile?.firstName],
    [t('users.lastName'), user.human?.profile?.lastName],
    [t('users.email'), `${user.human?.email?.email ?? ''}${user.human?.email?.isEmailVerified ? ' ✓' : ''}`],
  ])}</section>
${formCard(t('account.changePassword'), password)}
<h2>${t('account.sessions')}</h2>
<p class="intro">${t('account.sessionsIntro')}</p>
${table(
  [t('common.created'), t('account.lastActive'), ''],
  sessions.map((s) => [
    when(s.details?.creationDate),
    when(s.details?.changeDate),
    s.sessionId === currentSessionId
      ? html`<span class="badge ok">${t('account.thisSession')}</span>`
      : actionButton(`/ui/console/me/sessions/${encodeURIComponent(s.sessionId)}/end`, csrf, t('account.endSession')),
  ]),
  t('common.none'),
)}
${factorsSection(t, csrf, '/ui/console/me', factors, {
  otp: otpPanel(t, csrf, factors, otpSetup),
  passkeyLink: html`<div class="actions">${actionButton('/ui/console/me/passkeys/link', csrf, t('factors.sendPasskeyLink'))}</div>`,
})}`;
}
