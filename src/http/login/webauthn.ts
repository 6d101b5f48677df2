import type { FlowView } from '../../services/ports.js';
import { parseCeremonyAnswer, WebAuthn, type Ceremony, type WebAuthnKind } from '../../services/webauthn.js';
import { beginningAt } from '../../domain/revocation-horizon.js';
import { enrollableFactors, mfaPrompt, factsOf, passkeysAllowed } from '../../domain/sign-in-policy.js';
import { firstFactorAt, isExternal } from '../../model/auth-checks.js';
import { U2F_SECOND_FACTOR, U2F_WITH_VERIFICATION, type UserRecord, webauthnTokenRefusal } from '../../model/records.js';
import { ApiError } from '../../model/errors.js';
import { parseFormBody, parseUrlEncoded, type Form } from '../../protocol/form.js';
import { ceremonyPage, donePage, errorPage, type CeremonyView, type CodeFormTarget } from '../../ui/pages.js';
import { translator, type Locale, type TextKey } from '../../ui/i18n.js';
import { html } from '../../util/html.js';
import { clock } from '../../util/clock.js';
import type { View } from '../../util/readonly.js';
import { ceremonyResponse, htmlResponse } from '../html.js';
import type { Request, Response, Route } from '../types.js';
import type { LoginFlow, LoginKit } from './federation.js';
import { agentOf } from './agent.js';
import { recordSignInFailure } from '../../observability/recorder.js';

/**
 * Passkeys and security keys at the login (ZITADEL's passwordless and U2F), each a WebAuthn
 * ceremony (services/webauthn.ts) on a page whose one script is allowed by its hash:
 * - `passkey`: the first factor for a person who has one (passwordlessType ALLOWED), instead of
 *   the password (which the page still offers): two factors in one (`amr` `user mfa`);
 * - `u2f`: the second factor for a person who has a security key (with `multiFactors`
 *   U2F_WITH_VERIFICATION a passkey serves too, with user verification, and lasts
 *   `multiFactorCheckLifetime`); the page offers their other factors;
 * - `u2f-setup`: a security key enrolled from the enrollment step (`secondFactors` U2F);
 * - `passkey-setup`: a passkey offered after a password sign-in (skipped: not again for 30 days);
 * - a passkey registered from a link (`…/passwordless/_link`, `_send_link`): the code is the proof.
 * The challenge of each page is stored with the sign-in request and used once; the signature
 * counter is decided on the person as stored (a clone's older counter is refused).
 */
export type WebAuthnPorts = Pick<FlowView, 'authRequests' | 'orgs' | 'loginDirectory' | 'issuer' | 'userCodes' | 'masterKey'>;

export interface WebAuthnKit<F extends LoginFlow> extends LoginKit<F> {
  /** The person who passed the first factor in this request (still active), else undefined. */
  authenticatedUser(flow: F): View<UserRecord> | undefined;
  loginNameOf(user: View<UserRecord>, flow: F): string;
  /** Whether the person may sign in for this request (a person of its org, in an active org). */
  eligible(flow: F, user: View<UserRecord> | undefined): boolean;
  /** Mails the person a code for the email second factor (entering that step). */
  sendOtpEmail(flow: F, user: View<UserRecord>): Promise<unknown>;
  /** Leaves an optional enrollment without enrolling (remembered for mfaInitSkipLifetime). */
  skipEnrollment(flow: F): Promise<Response>;
}

/** The setup page of each kind of key: its texts and where its answer goes. */
const SETUP_PAGES = {
  passwordless: { title: 'passkeySetup.title', intro: 'passkeySetup.intro', button: 'passkeySetup.button', action: '/ui/login/passkey/setup' },
  u2f: { title: 'u2fSetup.title', intro: 'u2fSetup.intro', button: 'u2fSetup.button', action: '/ui/login/u2f/setup' },
} as const satisfies Record<WebAuthnKind, { title: TextKey; intro: TextKey; button: TextKey; action: string }>;

/** How long the sealed state of a link's registration page holds (ms). */
const LINK_PAGE_MS = 10 * 60_000;

export function webauthnLogin<F extends LoginFlow>(ctx: WebAuthnPorts, kit: WebAuthnKit<F>) {
  const webauthn = new WebAuthn(ctx.issuer);
  const stateKey = ctx.masterKey;
  const loginPolicy = (orgId: string) => ctx.orgs.policy('login', orgId).policy;
  const tokensOf = (user: View<UserRecord>, kinds: readonly WebAuthnKind[]) => (user.human?.webauthn ?? []).filter((t) => kinds.includes(t.kind));
  /** The keys the second-factor step takes: security keys, and passkeys where the policy makes them a multi factor. */
  const secondFactorTokens = (user: View<UserRecord>) => tokensOf(user, loginPolicy(user.orgId).multiFactors.includes(U2F_WITH_VERIFICATION) ? ['u2f', 'passwordless'] : ['u2f']);
  const t = (flow: F, key: TextKey) => kit.t(flow, key);

  /** Whether the login offers this person their passkey instead of the password. */
  const offersPasskey = (user: View<UserRecord>) => passkeysAllowed(loginPolicy(user.orgId)) && factsOf(user).hasPasskey === true;

  const switchForm = (flow: F, action: string, text: string, fields: Record<string, string> = {}) => html`<form method="post" action="${action}">
<input type="hidden" name="authRequestID" value="${flow.page.authRequestId}">
<input type="hidden" name="csrf" value="${flow.page.csrf}">
${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit" class="secondary">${text}</button>
</form>`;

  /** The name a person gave a new key, or the kind's own. */
  const tokenName = (form: Form, kind: WebAuthnKind) => (form.get('name') ?? '').trim().slice(0, 100) || (kind === 'u2f' ? 'Security key' : 'Passkey');

  /** What the enrollment refused (the key registered already, the most kept), as the page says it; anything else goes on as an error. */
  const refusalText = (error: unknown): string => {
    if (error instanceof ApiError && (error.kind === 'AlreadyExists' || error.kind === 'InvalidArgument')) return error.message;
    throw error;
  };

  /** A ceremony's page for the person: its challenge stored with the sign-in request (taken by the answer). */
  async function ceremonyOf(flow: F, user: View<UserRecord>, ceremony: Ceremony<unknown>, view: Omit<CeremonyView, 'options' | 'loginName' | 'error'>, error: string | undefined): Promise<Response> {
    await ctx.authRequests.setChallenge(flow.auth, ceremony.challenge);
    return ceremonyResponse(200, ceremonyPage({ page: flow.page }, { ...view, options: ceremony.options, loginName: kit.loginNameOf(user, flow), error }));
  }

  /** The page of a WebAuthn step, with a new challenge stored for it. */
  async function page(flow: F, error?: string): Promise<Response> {
    const step = flow.auth.step;
    if (step === 'passkey') {
      const user = flow.auth.userId ? ctx.orgs.getUser(flow.auth.userId) : undefined;
      if (!user || !offersPasskey(user)) return kit.expired(flow.agent);
      return ceremonyOf(
        flow,
        user,
        await webauthn.authentication(tokensOf(user, ['passwordless']), 'required'),
        {
          title: t(flow, 'passkey.title'),
          intro: t(flow, 'passkey.intro'),
          mode: 'authenticate',
          action: '/ui/login/passkey',
          button: t(flow, 'passkey.button'),
          // The password instead, where the person's login policy takes passwords at all.
          alternatives: loginPolicy(user.orgId).allowUsernamePassword ? switchForm(flow, '/ui/login/passkey/password', t(flow, 'passkey.password')) : '',
        },
        error,
      );
    }
    const user = kit.authenticatedUser(flow);
    if (!user?.human) return kit.expired(flow.agent);
    if (step === 'u2f') {
      const tokens = secondFactorTokens(user);
      // Passkeys among them are asked with user verification ('preferred': security keys without it still answer; a passkey's answer must carry it).
      return ceremonyOf(
        flow,
        user,
        await webauthn.authentication(tokens, tokens.some((t) => t.kind === 'passwordless') ? 'preferred' : 'discouraged'),
        {
          title: t(flow, 'u2f.title'),
          intro: t(flow, 'u2f.intro'),
          mode: 'authenticate',
          action: '/ui/login/u2f',
          button: t(flow, 'u2f.button'),
          alternatives: html`${user.human.otpSecretSealed ? switchForm(flow, '/ui/login/u2f/switch', t(flow, 'u2f.otp'), { to: 'otp' }) : ''}${
            user.human.otpEmail ? switchForm(flow, '/ui/login/u2f/switch', t(flow, 'u2f.email'), { to: 'otp-email' }) : ''
          }`,
        },
        error,
      );
    }
    const kind: WebAuthnKind = step === 'passkey-setup' ? 'passwordless' : 'u2f';
    const ceremony = await webauthn.registration(user, kit.loginNameOf(user, flow), kind);
    const policy = loginPolicy(user.orgId);
    const optional = mfaPrompt(factsOf(user), policy, clock.now(), isExternal(flow.auth.checks)) !== 'required';
    const others = enrollableFactors(policy).some((f) => f !== U2F_SECOND_FACTOR);
    const setup = SETUP_PAGES[kind];
    return ceremonyOf(
      flow,
      user,
      ceremony,
      {
        title: t(flow, setup.title),
        intro: t(flow, setup.intro),
        mode: 'register',
        action: setup.action,
        button: t(flow, setup.button),
        askName: true,
        alternatives:
          kind === 'passwordless'
            ? switchForm(flow, '/ui/login/passkey/setup/skip', t(flow, 'passkeySetup.skip'))
            : html`${others ? switchForm(flow, '/ui/login/u2f/setup/back', t(flow, 'external.back')) : ''}${optional ? switchForm(flow, '/ui/login/mfa/skip-u2f', t(flow, 'mfa.skip')) : ''}`,
      },
      error,
    );
  }

  /** The ceremony's answer and the challenge it must sign (taken: used once); undefined when there is no answer. */
  async function answerOf(flow: F, form: Form): Promise<{ answer: unknown; challenge: string } | undefined> {
    const challenge = await ctx.authRequests.takeChallenge(flow.auth);
    const answer = parseCeremonyAnswer(form.get('credential'));
    return challenge && answer && !form.get('failure') ? { answer, challenge } : undefined;
  }

  const failed = (flow: F) => {
    recordSignInFailure('webauthn');
    return page(flow, t(flow, 'webauthn.failed'));
  };

  async function signInWithPasskey(flow: F, form: Form): Promise<Response> {
    const user = flow.auth.userId ? ctx.orgs.getUser(flow.auth.userId) : undefined;
    if (!user || !kit.eligible(flow, user) || !offersPasskey(user)) return kit.expired(flow.agent);
    const given = await answerOf(flow, form);
    if (!given) return failed(flow);
    const result = await webauthn.verifyAuthentication(given.answer, given.challenge, tokensOf(user, ['passwordless']), () => true);
    if (!result) return failed(flow);
    const used = await ctx.loginDirectory.from(flow.peer).useWebAuthn(user.id, result.token.id, result.counter);
    // The person as stored when the key's use was decided: locked or deactivated meanwhile goes no further.
    const stored = ctx.orgs.getUser(user.id);
    if (stored?.state === 'USER_STATE_LOCKED') return kit.show(flow, t(flow, 'password.locked'));
    if (!stored || !ctx.orgs.isActive(stored)) return kit.show(flow, t(flow, 'error.inactive'));
    if (!used) return failed(flow);
    await ctx.authRequests.passPasskey(flow.auth, user.id, beginningAt(stored));
    return kit.proceed(flow, user.id, await kit.renewCookie(flow));
  }

  async function checkSecurityKey(flow: F, form: Form): Promise<Response> {
    const user = kit.authenticatedUser(flow);
    if (!user?.human) return kit.expired(flow.agent);
    const given = await answerOf(flow, form);
    if (!given) return failed(flow);
    const result = await webauthn.verifyAuthentication(given.answer, given.challenge, secondFactorTokens(user), (token) => token.kind === 'passwordless');
    if (!result) return failed(flow);
    // Decided on the person as stored: a lock or reset since the first factor (on any thread or node) ends this sign-in.
    const used = await ctx.loginDirectory.from(flow.peer).useWebAuthn(user.id, result.token.id, result.counter, firstFactorAt(flow.auth.checks));
    if (!used) return kit.authenticatedUser(flow) ? failed(flow) : kit.expired(flow.agent);
    await ctx.authRequests.passOtp(flow.auth, beginningAt(user), result.token.kind === 'passwordless' ? 'u2f-uv' : 'u2f');
    return kit.proceed(flow, user.id);
  }

  /** A security key or passkey added in this sign-in; a security key is this sign-in's second factor too (enrollment). */
  async function enroll(flow: F, form: Form, kind: WebAuthnKind): Promise<Response> {
    const user = kit.authenticatedUser(flow);
    if (!user?.human) return kit.expired(flow.agent);
    if (kind === 'u2f' && !enrollableFactors(loginPolicy(user.orgId)).includes(U2F_SECOND_FACTOR)) return kit.show(flow);
    if (kind === 'passwordless' && !passkeysAllowed(loginPolicy(user.orgId))) return kit.show(flow);
    const given = await answerOf(flow, form);
    if (!given) return failed(flow);
    const token = await webauthn.verifyRegistration(given.answer, given.challenge, kind, tokenName(form, kind), clock.now());
    if (!token) return failed(flow);
    let enrolled;
    try {
      enrolled = await ctx.loginDirectory.from(flow.peer).enrollWebAuthn(user.id, token, firstFactorAt(flow.auth.checks));
    } catch (error) {
      return page(flow, refusalText(error));
    }
    if (!enrolled) return kit.expired(flow.agent);
    if (kind === 'u2f') await ctx.authRequests.passOtp(flow.auth, beginningAt(user), 'u2f');
    return kit.proceed(flow, user.id);
  }

  // ---- a passkey registered from a link (`…/passwordless/_link`, `_send_link`) ----

  interface LinkState {
    purpose: 'passkey-link';
    challenge: string;
    userId: string;
    until: number;
  }
  const linkTarget = (locale: Locale, user: View<UserRecord> | undefined): CodeFormTarget => ({ locale, userId: user?.id ?? '' });
  const sealState = (state: LinkState) => Buffer.from(stateKey.encrypt(Buffer.from(JSON.stringify(state)))).toString('base64url');
  /** The page's sealed state, only if it is one (its purpose named: nothing else the master key sealed passes for it). */
  const openState = (text: string | undefined): LinkState | undefined => {
    try {
      const state = text ? (JSON.parse(stateKey.decrypt(Buffer.from(text, 'base64url')).toString('utf8')) as Partial<LinkState>) : undefined;
      return state?.purpose === 'passkey-link' && typeof state.challenge === 'string' && typeof state.userId === 'string' && typeof state.until === 'number' ? (state as LinkState) : undefined;
    } catch {
      return undefined;
    }
  };

  async function linkPage(locale: Locale, user: View<UserRecord>, code: string, error?: string): Promise<Response> {
    const tr = translator(locale);
    const { options, challenge } = await webauthn.registration(user, ctx.orgs.preferredLoginName(user), 'passwordless');
    const state = sealState({ purpose: 'passkey-link', challenge, userId: user.id, until: clock.now() + LINK_PAGE_MS });
    return ceremonyResponse(
      200,
      ceremonyPage(linkTarget(locale, user), {
        title: tr('passkeySetup.title'),
        intro: tr('passkeyLink.intro'),
        mode: 'register',
        options,
        action: '/ui/login/passwordless/init',
        button: tr('passkeySetup.button'),
        loginName: ctx.orgs.preferredLoginName(user),
        askName: true,
        error,
        // The language of the page the link opened stays the answer's.
        fields: { code, state, ui_locales: locale },
      }),
    );
  }

  const linkError = (locale: Locale) => htmlResponse(400, errorPage(locale, translator(locale)('code.invalid')));

  async function linkRegistration(req: Request): Promise<Response> {
    const form = parseFormBody(req.headers['content-type'], req.body);
    const locale = agentOf(ctx, req, form.get('ui_locales')?.slice(0, 50)).locale;
    const user = ctx.orgs.getUser((form.get('userID') ?? '').slice(0, 200));
    const state = openState(form.get('state'));
    const code = (form.get('code') ?? '').slice(0, 40);
    if (!user?.human || !state || state.userId !== user.id || state.until < clock.now() || !passkeysAllowed(loginPolicy(user.orgId))) return linkError(locale);
    const answer = parseCeremonyAnswer(form.get('credential'));
    const token = answer && !form.get('failure') ? await webauthn.verifyRegistration(answer, state.challenge, 'passwordless', tokenName(form, 'passwordless'), clock.now()) : undefined;
    if (!token) return linkPage(locale, user, code, translator(locale)('webauthn.failed'));
    // What the enrollment would refuse is told before the code is spent (the link still works for another key).
    const refused = webauthnTokenRefusal(user.human.webauthn ?? [], token.id);
    if (refused) return linkPage(locale, user, code, refused.message);
    // The code is what proves the link was this person's: used once, now that the key answered.
    const redeemed = await ctx.userCodes.redeem(user.id, 'passwordless', code, clock.now());
    if (redeemed.result !== 'ok') return linkError(locale);
    let enrolled;
    try {
      enrolled = await ctx.loginDirectory.from(req.peer).enrollWebAuthn(user.id, token, undefined);
    } catch (error) {
      return htmlResponse(400, errorPage(locale, refusalText(error)));
    }
    if (!enrolled) return linkError(locale);
    const tr = translator(locale);
    return htmlResponse(200, donePage(locale, tr('passkeyLink.done.title'), tr('passkeyLink.done.intro')));
  }

  const routes: Route[] = [
    kit.route('/ui/login/passkey', { POST: kit.atStep('passkey', signInWithPasskey) }),
    kit.route('/ui/login/passkey/password', {
      POST: kit.atStep('passkey', async (flow) => {
        await ctx.authRequests.enterStep(flow.auth, 'password');
        return kit.backToStep(flow);
      }),
    }),
    kit.route('/ui/login/u2f', { POST: kit.atStep('u2f', checkSecurityKey) }),
    kit.route('/ui/login/u2f/switch', {
      POST: kit.atStep('u2f', async (flow, form) => {
        const user = kit.authenticatedUser(flow);
        const to = form.get('to') === 'otp-email' ? 'otp-email' : 'otp';
        const has = to === 'otp' ? user?.human?.otpSecretSealed !== undefined : user?.human?.otpEmail === true;
        if (!user || !has) return kit.backToStep(flow);
        if (to === 'otp-email') await kit.sendOtpEmail(flow, user);
        await ctx.authRequests.enterStep(flow.auth, to);
        return kit.backToStep(flow);
      }),
    }),
    kit.route('/ui/login/mfa/u2f', {
      POST: kit.atStep('mfa-setup', async (flow) => {
        const user = kit.authenticatedUser(flow);
        if (!user || !enrollableFactors(loginPolicy(user.orgId)).includes(U2F_SECOND_FACTOR)) return kit.backToStep(flow);
        await ctx.authRequests.enterStep(flow.auth, 'u2f-setup');
        return kit.backToStep(flow);
      }),
    }),
    kit.route('/ui/login/u2f/setup', { POST: kit.atStep('u2f-setup', (flow, form) => enroll(flow, form, 'u2f')) }),
    kit.route('/ui/login/u2f/setup/back', {
      POST: kit.atStep('u2f-setup', async (flow) => {
        await ctx.authRequests.enterStep(flow.auth, 'mfa-setup');
        return kit.backToStep(flow);
      }),
    }),
    kit.route('/ui/login/mfa/skip-u2f', { POST: kit.atStep('u2f-setup', (flow) => kit.skipEnrollment(flow)) }),
    kit.route('/ui/login/passkey/setup', { POST: kit.atStep('passkey-setup', (flow, form) => enroll(flow, form, 'passwordless')) }),
    kit.route('/ui/login/passkey/setup/skip', {
      POST: kit.atStep('passkey-setup', async (flow) => {
        const user = kit.authenticatedUser(flow);
        if (!user) return kit.expired(flow.agent);
        await ctx.loginDirectory.from(flow.peer).skipPasskeyPrompt(user.id, clock.now());
        return kit.proceed(flow, user.id);
      }),
    }),
    kit.route('/ui/login/passwordless/init', {
      GET: async (req) => {
        const query = parseUrlEncoded(req.query);
        const locale = agentOf(ctx, req, query.get('ui_locales')).locale;
        const user = ctx.orgs.getUser((query.get('userID') ?? '').slice(0, 200));
        const code = (query.get('code') ?? '').slice(0, 40);
        if (!user?.human || !code || !passkeysAllowed(loginPolicy(user.orgId)) || (await ctx.userCodes.check(user.id, 'passwordless', code, clock.now())).result !== 'ok') return linkError(locale);
        return linkPage(locale, user, code);
      },
      POST: linkRegistration,
    }),
  ];

  return { routes, page, offersPasskey };
}
