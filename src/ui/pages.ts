import { html, Html } from '../util/html.js';
import { WEBAUTHN_SCRIPT } from './webauthn-script.js';
import type { Locale, Translate } from './i18n.js';
import { translator } from './i18n.js';
import { STYLESHEET_PATH } from './styles.js';

/**
 * An org's look on the login pages (its label and privacy policies): its stylesheet (colours and
 * theme), its links in the footer, whether "Secured by Sesame" shows, and the `@domain` left off
 * shown login names (hideLoginNameSuffix).
 */
export interface Brand {
  stylesheet?: string | undefined;
  /** The org's logo (its label policy's), light and dark, in place of Sesame's mark. */
  logo?: { light?: string | undefined; dark?: string | undefined } | undefined;
  /** The org's icon (its label policy's), as the pages' favicon. */
  icon?: string | undefined;
  /** The org's name, as the logo's text alternative. */
  name?: string | undefined;
  hideWatermark: boolean;
  loginNameSuffix?: string | undefined;
  links: { tos?: string; privacy?: string; help?: string; docs?: string; support?: string; custom?: { href: string; text: string } };
}

/**
 * What every login page carries. The login pages: each is a plain HTML form posting back to Sesame
 * (works without JavaScript), carrying the auth request id and a CSRF token bound to the user-agent
 * cookie.
 */
export interface PageContext {
  brand?: Brand | undefined;
  locale: Locale;
  /** Name shown to the user for the application they sign in to. */
  clientName: string;
  authRequestId: string;
  csrf: string;
}

function footerLinks(t: Translate, brand: Brand | undefined): Html | string {
  const l = brand?.links;
  if (!l) return '';
  const items = [
    l.tos ? html`<a href="${l.tos}" rel="noopener">${t('privacy.tos')}</a>` : '',
    l.privacy ? html`<a href="${l.privacy}" rel="noopener">${t('privacy.privacy')}</a>` : '',
    l.help ? html`<a href="${l.help}" rel="noopener">${t('privacy.help')}</a>` : '',
    l.docs ? html`<a href="${l.docs}" rel="noopener">${t('privacy.docs')}</a>` : '',
    l.support ? html`<a href="mailto:${l.support}">${l.support}</a>` : '',
    l.custom ? html`<a href="${l.custom.href}" rel="noopener">${l.custom.text || l.custom.href}</a>` : '',
  ].filter((i) => i !== '');
  return items.length > 0 ? html`<nav class="policy-links">${items}</nav>` : '';
}

function orgLogo(brand: Brand): Html {
  const { light, dark } = brand.logo!;
  const main = light ?? dark!;
  return html`<div class="brand org"><picture>${light && dark ? html`<source srcset="${dark}" media="(prefers-color-scheme: dark)">` : ''}<img src="${main}" alt="${brand.name ?? ''}"></picture></div>`;
}

/** A login name as a page shows it: without the org's `@domain` when its label policy says so. */
function shownName(brand: Brand | undefined, loginName: string): string {
  const suffix = brand?.loginNameSuffix;
  return suffix && loginName.toLowerCase().endsWith(suffix.toLowerCase()) ? loginName.slice(0, -suffix.length) : loginName;
}

function layout(locale: Locale, title: string, body: Html, t: Translate, head: Html | string = '', brand?: Brand): string {
  return html`<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · Sesame</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
${brand?.stylesheet ? html`<link rel="stylesheet" href="${brand.stylesheet}">` : ''}
${brand?.icon ? html`<link rel="icon" href="${brand.icon}">` : ''}
${head}</head>
<body>
<main class="card">
${brand?.logo ? orgLogo(brand) : brand?.hideWatermark ? '' : html`<div class="brand"><span class="logo" aria-hidden="true">◆</span><span>Sesame</span></div>`}
${body}
</main>
<footer>${footerLinks(t, brand)}${brand?.hideWatermark ? '' : t('footer')}</footer>
</body>
</html>
`.text;
}

const hidden = (p: PageContext) => html`<input type="hidden" name="authRequestID" value="${p.authRequestId}">
<input type="hidden" name="csrf" value="${p.csrf}">`;

const errorBox = (message: string | undefined) => (message ? html`<p class="error" role="alert">${message}</p>` : '');

/** An identity provider the login offers: a button that sends the browser there. */
export interface IdpButton {
  id: string;
  name: string;
}

/** "Sign in with …" buttons, each a form of its own (the CSRF token binds it to this browser). */
function idpButtons(p: PageContext, idps: readonly IdpButton[] | undefined): Html | string {
  if (!idps?.length) return '';
  const t = translator(p.locale);
  return html`<div class="idps"><p class="divider">${t('idp.or')}</p>${idps.map(
    (idp) => html`<form method="post" action="/ui/login/idp">
${hidden(p)}
<input type="hidden" name="idpId" value="${idp.id}">
<button type="submit" class="secondary">${t('idp.signInWith', { idp: idp.name })}</button>
</form>`,
  )}</div>`;
}

export function loginNamePage(p: PageContext, options: { loginName?: string; error?: string; info?: string; allowRegister: boolean; idps?: readonly IdpButton[]; allowPassword?: boolean }): string {
  const t = translator(p.locale);
  return layout(
    p.locale,
    t('login.title'),
    html`<h1>${t('login.title')}</h1>
<p class="intro">${t('login.intro', { client: p.clientName })}</p>
${errorBox(options.error)}${options.info ? html`<p class="info" role="status">${options.info}</p>` : ''}
${
  options.allowPassword === false
    ? ''
    : html`<form method="post" action="/ui/login/loginname">
${hidden(p)}
<label for="loginName">${t('login.loginName')}</label>
<input type="text" id="loginName" name="loginName" value="${options.loginName ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus>
<button type="submit">${t('login.next')}</button>
</form>`
}
${idpButtons(p, options.idps)}
${options.allowRegister ? html`<div class="links"><a href="/ui/login/register?authRequestID=${p.authRequestId}">${t('login.register')}</a></div>` : ''}`,
    t,
    '',
    p.brand,
  );
}

export function passwordPage(p: PageContext, options: { loginName: string; error?: string; info?: string; allowReset: boolean; idps?: readonly IdpButton[] }): string {
  const t = translator(p.locale);
  return layout(
    p.locale,
    t('password.title'),
    html`<h1>${t('password.title')}</h1>
<span class="user-chip">${shownName(p.brand, options.loginName)}</span>
<p class="intro">${t('password.intro', { user: shownName(p.brand, options.loginName) })}</p>
${errorBox(options.error)}${options.info ? html`<p class="info" role="status">${options.info}</p>` : ''}
<form method="post" action="/ui/login/password">
${hidden(p)}
<input type="text" name="loginName" value="${options.loginName}" autocomplete="username" hidden>
<label for="password">${t('password.label')}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required autofocus>
<button type="submit">${t('password.submit')}</button>
</form>
${
  options.allowReset
    ? html`<form method="post" action="/ui/login/password/reset">
${hidden(p)}
<button type="submit" class="link">${t('reset.link')}</button>
</form>`
    : ''
}
${idpButtons(p, options.idps)}
<form method="post" action="/ui/login/loginname/change">
${hidden(p)}
<button type="submit" class="secondary">${t('password.otherUser')}</button>
</form>`,
    t,
    '',
    p.brand,
  );
}

/**
 * Where a form of the code pages goes back to: the sign-in under way (auth request and CSRF token),
 * or, opened from a mailed link in another browser, the person alone (the code is what proves it).
 */
export type CodeFormTarget = { page: PageContext } | { locale: Locale; userId: string; brand?: Brand | undefined };

const codeTargetFields = (target: CodeFormTarget) => ('page' in target ? hidden(target.page) : html`<input type="hidden" name="userID" value="${target.userId}">`);
const localeOf = (target: CodeFormTarget) => ('page' in target ? target.page.locale : target.locale);
const brandOf = (target: CodeFormTarget) => ('page' in target ? target.page.brand : target.brand);
const infoBox = (message: string | undefined) => (message ? html`<p class="info" role="status">${message}</p>` : '');

export interface CodePageView {
  loginName?: string | undefined;
  /** The address the code went to, partly hidden. */
  email?: string | undefined;
  /** From the mailed link. */
  code?: string | undefined;
  error?: string | undefined;
  info?: string | undefined;
}

/** The email verification step: the mailed code, typed or from the link; a new code on request. */
export function verifyEmailPage(target: CodeFormTarget, view: CodePageView): string {
  const locale = localeOf(target);
  const t = translator(locale);
  return layout(
    locale,
    t('verifyEmail.title'),
    html`<h1>${t('verifyEmail.title')}</h1>
${view.loginName ? html`<span class="user-chip">${shownName(brandOf(target), view.loginName)}</span>` : ''}
<p class="intro">${view.email ? t('verifyEmail.intro', { email: view.email }) : t('verifyEmail.introLink')}</p>
${errorBox(view.error)}${infoBox(view.info)}
<form method="post" action="/ui/login/mail/verification">
${codeTargetFields(target)}
<label for="code">${t('code.label')}</label>
<input type="text" id="code" name="code" class="code" value="${view.code ?? ''}" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="20" required ${view.code ? '' : 'autofocus'}>
<button type="submit">${t('verifyEmail.submit')}</button>
</form>
${
  'page' in target
    ? html`<form method="post" action="/ui/login/mail/verification/resend">
${hidden(target.page)}
<button type="submit" class="secondary">${t('code.resend')}</button>
</form>`
    : ''
}`,
    t,
    '',
    brandOf(target),
  );
}

/** A new password with a mailed code: a reset, or setting up an account that has none (`init`). */
export function passwordByCodePage(target: CodeFormTarget, view: CodePageView & { kind: 'reset' | 'init'; passwordSet?: boolean }): string {
  const locale = localeOf(target);
  const t = translator(locale);
  const title = view.kind === 'reset' ? t('reset.title') : t('init.title');
  const action = view.kind === 'reset' ? '/ui/login/password/init' : '/ui/login/user/init';
  return layout(
    locale,
    title,
    html`<h1>${title}</h1>
${view.loginName ? html`<span class="user-chip">${shownName(brandOf(target), view.loginName)}</span>` : ''}
<p class="intro">${view.kind === 'reset' ? t('reset.intro') : t('init.intro')}</p>
${errorBox(view.error)}${infoBox(view.info)}
<form method="post" action="${action}">
${codeTargetFields(target)}
${view.loginName ? html`<input type="text" name="loginName" value="${view.loginName}" autocomplete="username" hidden>` : ''}
<label for="code">${t('code.label')}</label>
<input type="text" id="code" name="code" class="code" value="${view.code ?? ''}" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="20" required ${view.code ? '' : 'autofocus'}>
${
  view.passwordSet
    ? ''
    : html`<label for="password">${t('passwordChange.new')}</label>
<input type="password" id="password" name="password" autocomplete="new-password" required ${view.code ? 'autofocus' : ''}>
<label for="passwordConfirm">${t('passwordChange.confirm')}</label>
<input type="password" id="passwordConfirm" name="passwordConfirm" autocomplete="new-password" required>`
}
<button type="submit">${view.kind === 'reset' ? t('reset.submit') : t('init.submit')}</button>
</form>
${
  'page' in target && view.kind === 'init'
    ? html`<form method="post" action="/ui/login/user/init/resend">
${hidden(target.page)}
<button type="submit" class="secondary">${t('code.resend')}</button>
</form>`
    : ''
}`,
    t,
    '',
    brandOf(target),
  );
}

/** A page that says something was done (an address verified, a password set), outside a sign-in. */
export function donePage(locale: Locale, title: string, intro: string, brand?: Brand): string {
  const t = translator(locale);
  return layout(locale, title, html`<h1>${title}</h1><p class="intro">${intro}</p>`, t, '', brand);
}

export function otpPage(p: PageContext, options: { loginName: string; error?: string; emailInstead?: boolean }): string {
  const t = translator(p.locale);
  return layout(
    p.locale,
    t('otp.title'),
    html`<h1>${t('otp.title')}</h1>
<span class="user-chip">${shownName(p.brand, options.loginName)}</span>
<p class="intro">${t('otp.intro')}</p>
${errorBox(options.error)}
<form method="post" action="/ui/login/otp">
${hidden(p)}
<label for="code">${t('otp.label')}</label>
<input type="text" id="code" name="code" class="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus>
<button type="submit">${t('otp.submit')}</button>
</form>
${
  options.emailInstead
    ? html`<form method="post" action="/ui/login/otp/email/switch">
${hidden(p)}
<button type="submit" class="secondary">${t('otpEmail.instead')}</button>
</form>`
    : ''
}`,
    t,
    '',
    p.brand,
  );
}

/** The second factor by email: an 8-digit code mailed for this sign-in, valid five minutes. */
export function otpEmailPage(p: PageContext, options: { loginName: string; email: string; error?: string | undefined; info?: string | undefined }): string {
  const t = translator(p.locale);
  return layout(
    p.locale,
    t('otpEmail.title'),
    html`<h1>${t('otpEmail.title')}</h1>
<span class="user-chip">${shownName(p.brand, options.loginName)}</span>
<p class="intro">${t('otpEmail.intro', { email: options.email })}</p>
${errorBox(options.error)}${infoBox(options.info)}
<form method="post" action="/ui/login/otp/email">
${hidden(p)}
<label for="code">${t('code.label')}</label>
<input type="text" id="code" name="code" class="code" inputmode="numeric" pattern="[0-9]{8}" maxlength="8" autocomplete="one-time-code" required autofocus>
<button type="submit">${t('otp.submit')}</button>
</form>
<form method="post" action="/ui/login/otp/email/resend">
${hidden(p)}
<button type="submit" class="secondary">${t('code.resend')}</button>
</form>`,
    t,
    '',
    p.brand,
  );
}

export function passwordChangePage(p: PageContext, options: { loginName: string; error?: string }): string {
  const t = translator(p.locale);
  return layout(
    p.locale,
    t('passwordChange.title'),
    html`<h1>${t('passwordChange.title')}</h1>
<span class="user-chip">${shownName(p.brand, options.loginName)}</span>
<p class="intro">${t('passwordChange.intro', { user: shownName(p.brand, options.loginName) })}</p>
${errorBox(options.error)}
<form method="post" action="/ui/login/password/change">
${hidden(p)}
<input type="text" name="loginName" value="${options.loginName}" autocomplete="username" hidden>
<label for="password">${t('passwordChange.new')}</label>
<input type="password" id="password" name="password" autocomplete="new-password" required autofocus>
<label for="passwordConfirm">${t('passwordChange.confirm')}</label>
<input type="password" id="passwordConfirm" name="passwordConfirm" autocomplete="new-password" required>
<button type="submit">${t('passwordChange.submit')}</button>
</form>`,
    t,
    '',
    p.brand,
  );
}

export interface MfaSetupView {
  loginName: string;
  /** The factors the policy lets the person enroll. */
  totp: boolean;
  email: boolean;
  /** A security key may be enrolled instead. */
  u2f?: boolean;
  /** The base32 secret, shown in groups of four for typing in. */
  secret: string;
  /** The otpauth:// URI as a QR code: an SVG data URL. */
  qrCode: string;
  required: boolean;
  error?: string;
}

/** TOTP enrollment: QR code and key, confirmed with a code; works without JavaScript. */
export function mfaSetupPage(p: PageContext, view: MfaSetupView): string {
  const t = translator(p.locale);
  // Groups of four that wrap only between groups.
  const groups = view.secret.match(/.{1,4}/g) ?? [];
  return layout(
    p.locale,
    t('mfa.title'),
    html`<h1>${t('mfa.title')}</h1>
<span class="user-chip">${shownName(p.brand, view.loginName)}</span>
<p class="intro">${view.totp ? t(view.required ? 'mfa.intro.required' : 'mfa.intro.optional') : t(view.required ? 'mfa.email.required' : 'mfa.email.optional')}</p>
${errorBox(view.error)}
${
  view.totp
    ? html`<img class="qr" src="${view.qrCode}" alt="${t('mfa.qr')}" width="200" height="200">
<p class="intro">${t('mfa.secret')}:</p>
<p class="secret"><code class="secret">${groups.map((g, i) => html`${i > 0 ? ' ' : ''}<span>${g}</span>`)}</code></p>
<form method="post" action="/ui/login/mfa/verify">
${hidden(p)}
<label for="code">${t('otp.label')}</label>
<input type="text" id="code" name="code" class="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus>
<button type="submit">${t('mfa.submit')}</button>
</form>`
    : ''
}
${
  view.email
    ? html`<form method="post" action="/ui/login/mfa/email">
${hidden(p)}
<button type="submit" class="${view.totp ? 'secondary' : ''}">${t('mfa.email.use')}</button>
</form>`
    : ''
}
${
  view.u2f
    ? html`<form method="post" action="/ui/login/mfa/u2f">
${hidden(p)}
<button type="submit" class="secondary">${t('mfa.u2f')}</button>
</form>`
    : ''
}
${
  view.required
    ? ''
    : html`<form method="post" action="/ui/login/mfa/skip">
${hidden(p)}
<button type="submit" class="secondary">${t('mfa.skip')}</button>
</form>`
}`,
    t,
    '',
    p.brand,
  );
}

/**
 * ZITADEL's login success page for native apps (unless `skipNativeAppSuccessPage`): the browser
 * tab says the sign-in is done and hands over to the app (meta refresh, no JavaScript needed).
 */
export function nativeSuccessPage(locale: Locale, location: string, clientName: string): string {
  const t = translator(locale);
  return layout(
    locale,
    t('native.title'),
    html`<h1>${t('native.title')}</h1>
<p class="intro">${t('native.intro', { client: clientName })}</p>
<p><a class="button" href="${location}">${t('native.continue', { client: clientName })}</a></p>`,
    t,
    html`<meta http-equiv="refresh" content="0;url=${location}">
`,
  );
}

export interface AccountEntry {
  sid: string;
  displayName: string;
  loginName: string;
}

export function selectAccountPage(p: PageContext, accounts: readonly AccountEntry[]): string {
  const t = translator(p.locale);
  const initial = (name: string) => (name.trim()[0] ?? '?').toUpperCase();
  return layout(
    p.locale,
    t('select.title'),
    html`<h1>${t('select.title')}</h1>
<p class="intro">${t('select.intro', { client: p.clientName })}</p>
<form method="post" action="/ui/login/select">
${hidden(p)}
<ul class="accounts">
${accounts.map(
  (
    a,
  ) => html`<li><button type="submit" name="sid" value="${a.sid}"><span class="avatar" aria-hidden="true">${initial(a.displayName)}</span><span class="account-text">${a.displayName}<small>${a.loginName} · ${t('select.signedIn')}</small></span></button></li>
`,
)}</ul>
<button type="submit" name="sid" value="other" class="secondary">${t('select.other')}</button>
</form>`,
    t,
    '',
    p.brand,
  );
}

/**
 * Signed in at an identity provider with an account linked to nobody here: link it to an existing
 * account (the person signs in to it), or create one from what the provider said (the names and
 * user name editable; the email as the provider gave it).
 */
export function externalChoicePage(p: PageContext, view: { idpName: string; email: string; values: RegisterValues; allowLink: boolean; allowCreate: boolean; error?: string | undefined }): string {
  const t = translator(p.locale);
  const v = view.values;
  return layout(
    p.locale,
    t('external.title'),
    html`<h1>${t('external.title')}</h1>
<p class="intro">${t('external.intro', { idp: view.idpName })}</p>
${errorBox(view.error)}
${
  view.allowCreate
    ? html`<form method="post" action="/ui/login/external/register">
${hidden(p)}
${nameFields(t, v)}
<label for="userName">${t('register.userName')}</label>
<input type="text" id="userName" name="userName" value="${v.userName ?? ''}" autocomplete="username" autocapitalize="none" required>
${view.email ? html`<p class="info">${t('external.email', { email: view.email })}</p>` : ''}
${termsToAccept(p) ? html`<label class="check"><input type="checkbox" name="acceptTerms" value="yes" required> ${t('register.acceptTerms')} ${termsLinks(t, p)}</label>` : ''}
<button type="submit">${t('external.create')}</button>
</form>`
    : ''
}
${
  view.allowLink
    ? html`<form method="post" action="/ui/login/external/link">
${hidden(p)}
<button type="submit" class="secondary">${t('external.link')}</button>
</form>`
    : ''
}
${!view.allowCreate && !view.allowLink ? html`<p>${t('external.none')}</p>` : ''}
<div class="links"><a href="/ui/login/login?authRequestID=${p.authRequestId}&amp;step=loginname">${t('external.back')}</a></div>`,
    t,
    '',
    p.brand,
  );
}

/** An LDAP provider's form: the directory's user name and password (Sesame asks the directory). */
export function ldapLoginPage(p: PageContext, view: { idpName: string; username: string; error?: string | undefined }): string {
  const t = translator(p.locale);
  return layout(
    p.locale,
    t('idp.signInWith', { idp: view.idpName }),
    html`<h1>${t('idp.signInWith', { idp: view.idpName })}</h1>
<p class="intro">${t('ldap.intro', { idp: view.idpName })}</p>
${errorBox(view.error)}
<form method="post" action="/ui/login/ldap">
${hidden(p)}
<label for="username">${t('ldap.username')}</label>
<input type="text" id="username" name="username" value="${view.username}" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus>
<label for="password">${t('password.label')}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">${t('password.submit')}</button>
</form>
<div class="links"><a href="/ui/login/login?authRequestID=${p.authRequestId}&amp;step=loginname">${t('external.back')}</a></div>`,
    t,
    '',
    p.brand,
  );
}

/**
 * A WebAuthn ceremony's page (a passkey or security key: to sign in, or to add one): the options
 * in a JSON block, the button the one script (WEBAUTHN_SCRIPT, allowed by its hash) enables, the
 * form it posts the answer in, and `alternatives`: the other ways on, which work without scripts.
 */
export interface CeremonyView {
  title: string;
  intro: string;
  mode: 'register' | 'authenticate';
  options: unknown;
  action: string;
  button: string;
  loginName?: string | undefined;
  error?: string | undefined;
  /** Token name field (adding one). */
  askName?: boolean;
  /** More hidden fields of the form (a link's code and the ceremony's sealed state). */
  fields?: Readonly<Record<string, string>>;
  alternatives?: Html | string;
}

export function ceremonyPage(target: CodeFormTarget, view: CeremonyView): string {
  const locale = 'page' in target ? target.page.locale : target.locale;
  const t = translator(locale);
  const data = new Html(JSON.stringify({ mode: view.mode, publicKey: view.options }).replace(/</g, '\\u003c'));
  return layout(
    locale,
    view.title,
    html`<h1>${view.title}</h1>
${view.loginName ? html`<span class="user-chip">${shownName('page' in target ? target.page.brand : target.brand, view.loginName)}</span>` : ''}
<p class="intro">${view.intro}</p>
${errorBox(view.error)}
<script type="application/json" id="webauthn-options">${data}</script>
<form method="post" action="${view.action}" id="webauthn-form">
${'page' in target ? hidden(target.page) : html`<input type="hidden" name="userID" value="${target.userId}">`}
${Object.entries(view.fields ?? {}).map(
  ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">
`,
)}<input type="hidden" name="credential" value="">
<input type="hidden" name="failure" value="">
${view.askName ? html`<label for="name">${t('webauthn.name')}</label><input type="text" id="name" name="name" maxlength="100" value="">` : ''}
<button type="submit" id="webauthn-start" disabled>${view.button}</button>
<noscript><p class="info">${t('webauthn.noscript')}</p></noscript>
</form>
${view.alternatives ?? ''}
<script>${new Html(WEBAUTHN_SCRIPT)}</script>`,
    t,
    '',
    'page' in target ? target.page.brand : target.brand,
  );
}

/** A new account's first and last name (registration, an account made from an identity provider's). */
function nameFields(t: Translate, values: RegisterValues): Html {
  return html`<div class="row">
<div><label for="firstName">${t('register.firstName')}</label><input type="text" id="firstName" name="firstName" value="${values.firstName ?? ''}" autocomplete="given-name" required></div>
<div><label for="lastName">${t('register.lastName')}</label><input type="text" id="lastName" name="lastName" value="${values.lastName ?? ''}" autocomplete="family-name" required></div>
</div>`;
}

export interface RegisterValues {
  firstName?: string;
  lastName?: string;
  email?: string;
  userName?: string;
}

/** The privacy policy's terms and privacy links: a registration accepts them. */
export function termsToAccept(p: PageContext): boolean {
  return Boolean(p.brand?.links.tos || p.brand?.links.privacy);
}

function termsLinks(t: Translate, p: PageContext): Html {
  const l = p.brand!.links;
  return html`${l.tos ? html`<a href="${l.tos}" rel="noopener">${t('privacy.tos')}</a>` : ''}${l.tos && l.privacy ? ' · ' : ''}${l.privacy ? html`<a href="${l.privacy}" rel="noopener">${t('privacy.privacy')}</a>` : ''}`;
}

export function registerPage(p: PageContext, values: RegisterValues, error?: string): string {
  const t = translator(p.locale);
  return layout(
    p.locale,
    t('register.title'),
    html`<h1>${t('register.title')}</h1>
<p class="intro">${t('register.intro', { client: p.clientName })}</p>
${errorBox(error)}
<form method="post" action="/ui/login/register">
${hidden(p)}
${nameFields(t, values)}
<label for="email">${t('register.email')}</label>
<input type="email" id="email" name="email" value="${values.email ?? ''}" autocomplete="email" required>
<label for="userName">${t('register.userName')}</label>
<input type="text" id="userName" name="userName" value="${values.userName ?? ''}" autocomplete="username" autocapitalize="none" required>
<label for="password">${t('register.password')}</label>
<input type="password" id="password" name="password" autocomplete="new-password" required>
<label for="passwordConfirm">${t('register.passwordConfirm')}</label>
<input type="password" id="passwordConfirm" name="passwordConfirm" autocomplete="new-password" required>
${termsToAccept(p) ? html`<label class="check"><input type="checkbox" name="acceptTerms" value="yes" required> ${t('register.acceptTerms')} ${termsLinks(t, p)}</label>` : ''}
<button type="submit">${t('register.submit')}</button>
</form>
<div class="links"><a href="/ui/login/login?authRequestID=${p.authRequestId}&amp;step=loginname">${t('register.back')}</a></div>`,
    t,
    '',
    p.brand,
  );
}

/**
 * The device page (RFC 8628 §3.3): the person types the code their device shows (or finds it
 * filled in from verification_uri_complete). `csrf` binds the form to this browser's cookie.
 */
export function deviceCodePage(locale: Locale, options: { csrf: string; userCode?: string; error?: string }): string {
  const t = translator(locale);
  return layout(
    locale,
    t('device.title'),
    html`<h1>${t('device.title')}</h1>
<p class="intro">${t('device.intro')}</p>
${errorBox(options.error)}
<form method="post" action="/ui/login/device">
<input type="hidden" name="csrf" value="${options.csrf}">
<label for="user_code">${t('device.code')}</label>
<input type="text" id="user_code" name="user_code" class="code" value="${options.userCode ?? ''}" maxlength="20" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus>
<button type="submit">${t('device.submit')}</button>
</form>`,
    t,
  );
}

/** Scopes that have words for people; the others are shown as they are. */
const SCOPE_TEXTS = new Set(['openid', 'profile', 'email', 'phone', 'address', 'offline_access']);

/**
 * After signing in, the one page that asks the person to allow a device (RFC 8628) or a client
 * what it asks for (the scopes, and the APIs: resources) on which account. A device's reminds them
 * to allow only a device of their own (RFC 8628 §5.4: codes get phished); a self-registered
 * client's (dynamic registration: anyone may have made it), device or not, says that nobody
 * vouches for it.
 */
export function consentPage(p: PageContext, options: { device: boolean; selfRegistered: boolean; loginName: string; scopes: readonly string[]; resources?: readonly string[] }): string {
  const t = translator(p.locale);
  const scopeText = (scope: string) => (SCOPE_TEXTS.has(scope) ? t(`device.scope.${scope}` as Parameters<Translate>[0]) : scope);
  const asked = [...options.scopes.map(scopeText), ...(options.resources ?? [])];
  const { device } = options;
  return layout(
    p.locale,
    t('device.consent.title'),
    html`<h1>${t('device.consent.title')}</h1>
<span class="user-chip">${shownName(p.brand, options.loginName)}</span>
<p class="intro">${t(device ? 'device.consent.intro' : 'client.consent.intro', { client: p.clientName, user: options.loginName })}</p>
${options.selfRegistered ? html`<p class="intro">${t('consent.selfRegistered', { client: p.clientName })}</p>` : ''}
${
  asked.length > 0
    ? html`<p class="intro">${t('device.consent.scopes')}</p>
<ul class="scopes">
${asked.map(
  (item) => html`<li>${item}</li>
`,
)}</ul>`
    : ''
}
<p class="intro">${t(device ? 'device.consent.own' : 'client.consent.own', { client: p.clientName })}</p>
<form method="post" action="${device ? '/ui/login/device/consent' : '/ui/login/consent'}">
${hidden(p)}
<button type="submit" name="decision" value="allow">${t('device.consent.allow')}</button>
<button type="submit" name="decision" value="deny" class="secondary">${t('device.consent.deny')}</button>
</form>
<form method="post" action="/ui/login/loginname/change">
${hidden(p)}
<button type="submit" class="secondary">${t('password.otherUser')}</button>
</form>`,
    t,
  );
}

/** The device's answer is recorded: it gets its tokens (or access_denied) at its next poll. */
export function deviceDonePage(locale: Locale, allowed: boolean, clientName: string): string {
  const t = translator(locale);
  const title = t(allowed ? 'device.allowed.title' : 'device.denied.title');
  return layout(locale, title, html`<h1>${title}</h1><p class="intro">${t(allowed ? 'device.allowed.intro' : 'device.denied.intro', { client: clientName })}</p>`, t);
}

/**
 * Where a link on Sesame's page takes the browser to a client, with what it carries: a URL, or a
 * form posted to the client (response_mode=form_post; a button, never submitted by itself).
 */
export type ContinueTo = { href: string } | { action: string; params: readonly [string, string][] };

/** A client the person may go on to: its name, whether it registered itself, and the way there. */
export interface ClientLink {
  clientName: string;
  selfRegistered: boolean;
  continueTo: ContinueTo;
}

/**
 * The link (or form button) to a client, shown where Sesame does not send the browser there by
 * itself, with where it leads (the person decides whether to go; a self-registered client is said
 * to be one).
 */
function clientLink(t: Translate, link: ClientLink): Html {
  const { clientName: client, continueTo } = link;
  const target = 'href' in continueTo ? continueTo.href.split(/[?#]/)[0]! : continueTo.action;
  return html`${
    link.selfRegistered
      ? html`<p class="intro">${t('consent.selfRegistered', { client })}</p>
`
      : ''
  }<p class="intro">${t('continue.intro', { client, target })}</p>
${
  'href' in continueTo
    ? html`<p><a class="button" href="${continueTo.href}">${t('continue.link', { client })}</a></p>`
    : html`<form method="post" action="${continueTo.action}">
${continueTo.params.map(
  ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">
`,
)}<button type="submit">${t('continue.link', { client })}</button>
</form>`
}`;
}

/**
 * An authorization error for a client Sesame does not send the browser to by itself (one that
 * registered itself, RFC 9700 §4.11.2): what went wrong, and a link that delivers the error to it.
 */
export function clientErrorPage(locale: Locale, message: string, link: ClientLink): string {
  const t = translator(locale);
  return layout(
    locale,
    t('continue.error.title'),
    html`<h1>${t('continue.error.title')}</h1>
<p class="error" role="alert">${message}</p>
${clientLink(t, link)}`,
    t,
  );
}

export function errorPage(locale: Locale, message: string, detail?: string): string {
  const t = translator(locale);
  return layout(
    locale,
    t('error.title'),
    html`<h1>${t('error.title')}</h1>
<p class="error" role="alert">${message}</p>
${detail ? html`<p class="intro">${detail}</p>` : ''}
<p class="intro">${t('error.back')}</p>`,
    t,
  );
}

/** After end_session; `link`: the client's post-logout page, when it named one but did not prove it asked (no id_token_hint). */
export function signedOutPage(locale: Locale, link?: ClientLink): string {
  const t = translator(locale);
  return layout(
    locale,
    t('logout.title'),
    html`<h1>${t('logout.title')}</h1><p class="intro">${t('logout.intro')}</p>
${link ? clientLink(t, link) : ''}`,
    t,
  );
}

/** The inline script of the form_post page; its hash goes into the page's Content-Security-Policy. */
export const FORM_POST_SCRIPT = 'document.forms[0].submit();';

/** OAuth 2.0 Form Post Response Mode: auto-submits; without JavaScript the user presses the button. */
export function formPostPage(locale: Locale, action: string, params: readonly [string, string][]): string {
  const t = translator(locale);
  return html`<!doctype html>
<html lang="${locale}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${t('formpost.continue')}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}"></head>
<body>
<main class="card">
<form method="post" action="${action}">
${params.map(
  ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">
`,
)}<noscript><p class="intro">${t('formpost.intro')}</p><button type="submit">${t('formpost.continue')}</button></noscript>
</form>
</main>
<script>${FORM_POST_SCRIPT}</script>
</body>
</html>
`.text;
}
