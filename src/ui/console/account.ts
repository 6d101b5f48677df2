import { Html, html } from '../../util/html.js';
import { WEBAUTHN_SCRIPT } from '../webauthn-script.js';
import type { UserView } from './api-shapes.js';
import type { ConsoleTranslate } from './texts.js';
import { actionButton, facts, field, formCard, postForm, removeControl, submit, table, when } from './widgets.js';
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

/** A security key being added: the WebAuthn creation options the auth API handed out (AddMyAuthFactorU2F). */
export interface U2fSetup {
  options: unknown;
}

/**
 * The ceremony of a security key: the options in a JSON block, the button the one script
 * (WEBAUTHN_SCRIPT, allowed by its hash on this answer only) enables, the form it posts the answer in.
 */
function u2fPanel(t: ConsoleTranslate, csrf: string, setup: U2fSetup): Html {
  const data = new Html(JSON.stringify({ mode: 'register', publicKey: setup.options }).replace(/</g, '\\u003c'));
  return html`<section class="once" role="status"><h3>${t('account.u2fSetup')}</h3><p>${t('account.u2fIntro')}</p>
<script type="application/json" id="webauthn-options">${data}</script>
<form method="post" action="/ui/console/me/u2f/verify" id="webauthn-form"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="credential" value=""><input type="hidden" name="failure" value="">
${field(t('common.name'), 'name', { value: t('factors.u2f') })}
<button type="submit" id="webauthn-start" class="primary" disabled>${t('account.u2fButton')}</button>
<noscript><p class="intro">${t('account.u2fNoscript')}</p></noscript></form>
<script>${new Html(WEBAUTHN_SCRIPT)}</script></section>`;
}

/** The button that starts a TOTP setup: none while the person has one. */
function otpButton(t: ConsoleTranslate, csrf: string, factors: FactorsData): Html | string {
  return factors.factors.some((f) => f.otp) ? '' : actionButton('/ui/console/me/otp', csrf, t('account.otpSetup'));
}

/** A TOTP setup under way: the key as a QR code and as text, and the code that confirms it. */
function otpPanel(t: ConsoleTranslate, csrf: string, setup: OtpSetup | undefined): Html | undefined {
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
  return undefined;
}

/**
 * The person's address and number: changed here (SetMyEmail, SetMyPhone: a sign-in of the last
 * minutes, else the page offers a new one), an unverified address verified with the mailed code.
 */
function contactSection(t: ConsoleTranslate, csrf: string, user: UserView): Html | string {
  const human = user.human;
  if (!human) return '';
  const unverified = human.email?.email && !human.email.isEmailVerified;
  const verify = unverified
    ? html`<section class="card"><h3>${t('account.verifyEmail')}</h3><p class="intro">${t('account.verifyIntro', { email: human.email?.email ?? '' })}</p>${postForm(
        '/ui/console/me/email/verify',
        csrf,
        html`${field(t('account.emailCode'), 'code', { required: true, autocomplete: 'one-time-code' })}${submit(t('account.verifyEmail'))}`,
      )}<div class="actions">${actionButton('/ui/console/me/email/resend', csrf, t('account.resendCode'))}</div></section>`
    : '';
  const email = postForm(
    '/ui/console/me/email',
    csrf,
    html`${field(t('users.email'), 'email', { type: 'email', required: true, value: human.email?.email ?? '', autocomplete: 'email' })}${submit(t('common.save'))}`,
  );
  const phone = html`${postForm('/ui/console/me/phone', csrf, html`${field(t('users.phone'), 'phone', { type: 'tel', required: true, value: human.phone?.phone ?? '', placeholder: '+41 79 123 45 67', autocomplete: 'tel' })}${submit(t('common.save'))}`)}${
    human.phone?.phone ? removeControl('/ui/console/me/phone/remove', csrf, t) : ''
  }`;
  return html`${verify}${formCard(t('users.changeEmail'), html`<p class="intro">${t('account.contactIntro')}</p>${email}`)}${formCard(t('users.changePhone'), html`<p class="intro">${t('account.contactIntro')}</p>${phone}`)}`;
}

export function accountPage(
  t: ConsoleTranslate,
  csrf: string,
  user: UserView,
  sessions: readonly SessionView[],
  currentSessionId: string | undefined,
  factors: FactorsData,
  otpSetup?: OtpSetup,
  u2fSetup?: U2fSetup,
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
    [t('users.email'), `${user.human?.email?.email ?? ''}${user.human?.email?.isEmailVerified ? ' ✓' : user.human?.email?.email ? ` (${t('account.unverified')})` : ''}`],
    [t('users.phone'), `${user.human?.phone?.phone ?? ''}${user.human?.phone?.phone ? (user.human.phone.isPhoneVerified ? ' ✓' : ` (${t('account.unverified')})`) : ''}`],
  ])}</section>
${contactSection(t, csrf, user)}
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
  otp: u2fSetup
    ? u2fPanel(t, csrf, u2fSetup)
    : (otpPanel(t, csrf, otpSetup) ?? html`<div class="actions">${otpButton(t, csrf, factors)}${actionButton('/ui/console/me/u2f', csrf, t('account.u2fSetup'))}</div>`),
  passkeyLink: html`<div class="actions">${actionButton('/ui/console/me/passkeys/link', csrf, t('factors.sendPasskeyLink'))}</div>`,
})}`;
}
