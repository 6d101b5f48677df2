import type { AuthRequestView, LoginStep } from '../../actors/auth-requests.js';
import { endSessionsOfUser, type SessionEndPorts } from '../../services/session-end.js';
import { afterNewPassword, setPasswordWithCode } from '../../services/new-password.js';
import type { UserSession } from '../../actors/user-sessions.js';
import { otpauthUri, verifyTotp } from '../../crypto/totp.js';
import { openOtpSecret, sealOtpSecret } from '../../crypto/otp-secret.js';
import { agentOf, newAgentCookieFor, type Agent } from '../login/agent.js';
import { authorizeError, completeAuthorization, consentNeeded, resumeSession, sessionRequirementOf, usableSessions } from '../login/respond.js';
import { enrollableFactors, factsOf, mfaPrompt, nextSignInStep } from '../../domain/sign-in-policy.js';
import { DEFAULT_POLICIES, INSTANCE_POLICY, OTP_EMAIL_SECOND_FACTOR, OTP_SECOND_FACTOR, U2F_SECOND_FACTOR } from '../../model/records.js';
import { EMAIL } from '../../domain/human-users.js';
import { brokenComplexityRule } from '../../domain/password-complexity.js';
import { clock } from '../../util/clock.js';
import { log } from '../../util/log.js';
import { beginningAt, predatesHorizon } from '../../domain/revocation-horizon.js';
import { qrCodeDataUrl } from '../../ui/qr-code.js';
import { ApiError } from '../../model/errors.js';
import type { LoginPolicy, UserRecord } from '../../model/records.js';
import { parseFormBody, parseUrlEncoded, type Form } from '../../protocol/form.js';
import { translator, type Locale, type TextKey } from '../../ui/i18n.js';
import { maskedEmail } from '../../domain/masked-email.js';
import { brandingOrgId } from '../../domain/branding-org.js';
import { assetPath } from '../../domain/label-asset.js';

import {
  consentPage,
  deviceDonePage,
  errorPage,
  loginNamePage,
  mfaSetupPage,
  otpPage,
  otpEmailPage,
  passwordChangePage,
  passwordPage,
  termsToAccept,
  type Brand,
  passwordByCodePage,
  donePage,
  verifyEmailPage,
  type CodeFormTarget,
  registerPage,
  selectAccountPage,
  signedOutPage,
  type PageContext,
  type RegisterValues,
} from '../../ui/pages.js';
import { LABEL_STYLESHEET_PATH, labelStylesheet, STYLESHEET, STYLESHEET_PATH } from '../../ui/styles.js';
import type { FlowView } from '../../services/ports.js';
import { csrfToken, csrfValid } from '../csrf.js';
import { htmlResponse, redirectResponse } from '../html.js';
import type { Request, Response, Route } from '../types.js';
import { LOGIN_PATH } from './authorize.js';
import type { RespondPorts } from '../login/respond.js';
import { decideDevice, type DeviceFlowPorts } from '../../services/device-flow.js';
import type { View } from '../../util/readonly.js';
import { recordSignIn, recordSignInFailure } from '../../observability/recorder.js';
import { federation } from '../login/federation.js';
import { webauthnLogin } from '../login/webauthn.js';
import { firstFactorAt, isExternal } from '../../model/auth-checks.js';

/** Where a label policy's images and fonts are served (domain/label-asset.ts makes the links). */
const ASSET_PATH = assetPath(':id');

/** What this module uses of the wired parts (src/app.ts). */
export type LoginPorts = Pick<
  FlowView,
  | 'authRequests'
  | 'clients'
  | 'instance'
  | 'issuer'
  | 'loginDirectory'
  | 'loginSecurity'
  | 'masterKey'
  | 'orgs'
  | 'userSessions'
  | 'userCodes'
  | 'notifications'
  | 'smtpConfigs'
  | 'labelAssets'
  | 'idps'
  | 'failureWindows'
  | 'activity'
> &
  RespondPorts &
  DeviceFlowPorts &
  SessionEndPorts;

/**
 * The login UI under /ui/login/: plain HTML forms (no JavaScript), each bound to an auth request
 * and the user-agent cookie, with a CSRF token. Steps: login name → password → (a required new
 * password) → TOTP code, or TOTP enrollment when the org's login policy forces or offers it; or
 * account selection / registration. Which step comes next is src/domain/policy-steps.ts's rule;
 * the last step signs the browser in under a new cookie and answers the client.
 */
const MAX_OTP_FAILURES_PER_REQUEST = 5;

interface Flow {
  agent: Agent & { cookie: string; agentId: string };
  auth: AuthRequestView;
  page: PageContext;
  /** The browser's address (the activity log's record of where a sign-in came from). */
  peer: string | undefined;
}

export function loginRoutes(ctx: LoginPorts): Route[] {
  const csrfKey = ctx.masterKey.deriveKey('login-csrf');
  const issuerHost = new URL(ctx.issuer).host;

  const t = (flow: Flow, key: TextKey, vars?: Record<string, string>) => translator(flow.page.locale)(key, vars);
  const loginPolicy = (orgId: string): View<LoginPolicy> => ctx.orgs.policy('login', orgId).policy;
  /**
   * The lockout policy decides whether the page says that an account is locked (`showLockoutFailure`);
   * otherwise the step's ordinary failure text is shown.
   */
  const lockedText = (user: View<UserRecord>, otherwise: TextKey = 'password.invalid'): TextKey => (ctx.orgs.policy('lockout', user.orgId).policy.showLockoutFailure ? 'password.locked' : otherwise);

  /** The look of the pages for the org whose branding they show (src/domain/branding-org.ts). */
  function brandOf(orgId: string, user: View<UserRecord> | undefined): Brand {
    const { policy: label, record } = ctx.orgs.policy('label', orgId);
    const privacy = ctx.orgs.policy('privacy', orgId).policy;
    const suffixOrg = user?.orgId ?? (orgId === INSTANCE_POLICY ? undefined : orgId);
    const org = suffixOrg ? ctx.orgs.getOrg(suffixOrg) : undefined;
    const asset = (id: string | undefined) => (id ? assetPath(id) : undefined);
    return {
      stylesheet: record ? `/ui/login/resources/label/${record.orgId || 'instance'}?v=${record.sequence}` : undefined,
      logo: label.logo || label.logoDark ? { light: asset(label.logo), dark: asset(label.logoDark) } : undefined,
      icon: asset(label.icon),
      name: orgId === INSTANCE_POLICY ? undefined : ctx.orgs.getOrg(orgId)?.name,
      hideWatermark: label.disableWatermark,
      loginNameSuffix: label.hideLoginNameSuffix && org ? `@${ctx.orgs.primaryDomain(org)}` : undefined,
      links: {
        ...(privacy.tosLink ? { tos: privacy.tosLink } : {}),
        ...(privacy.privacyLink ? { privacy: privacy.privacyLink } : {}),
        ...(privacy.helpLink ? { help: privacy.helpLink } : {}),
        ...(privacy.docsLink ? { docs: privacy.docsLink } : {}),
        ...(privacy.supportEmail ? { support: privacy.supportEmail } : {}),
        ...(privacy.customLink ? { custom: { href: privacy.customLink, text: privacy.customLinkText } } : {}),
      },
    };
  }

  const expired = (agent: Agent) => htmlResponse(400, errorPage(agent.locale, translator(agent.locale)('error.expired')));

  /** The auth request of a request, if it belongs to this browser. */
  async function flowOf(req: Request, form: Form | undefined): Promise<Flow | Response> {
    const agent = agentOf(ctx, req);
    const id = form?.get('authRequestID') ?? parseUrlEncoded(req.query).get('authRequestID');
    const auth = id && agent.agentId ? await ctx.authRequests.get(id, agent.agentId) : undefined;
    if (!auth || !agent.cookie || !agent.agentId) return expired(agent);
    if (form && !csrfValid(csrfKey, agent.cookie, auth.id, form.get('csrf'))) {
      return htmlResponse(403, errorPage(auth.locale, translator(auth.locale)('error.csrf')));
    }
    const app = ctx.clients.appByClient(auth.request.clientId);
    const user = auth.userId ? ctx.orgs.getUser(auth.userId) : undefined;
    const project = app ? ctx.orgs.getProject(app.projectId) : undefined;
    const brandOrg = brandingOrgId(project?.privateLabelingSetting ?? '', app?.orgId, auth.request.orgId, user?.orgId);
    return {
      agent: { ...agent, cookie: agent.cookie, agentId: agent.agentId, locale: auth.locale },
      auth,
      page: { locale: auth.locale, clientName: app?.name ?? auth.request.clientId, authRequestId: auth.id, csrf: csrfToken(csrfKey, agent.cookie, auth.id), brand: brandOf(brandOrg, user) },
      peer: req.peer,
    };
  }

  const backToStep = (flow: Flow, headers: Record<string, string> = {}) => redirectResponse(`${LOGIN_PATH}?authRequestID=${flow.auth.id}`, headers, 303);

  const registrationOrgId = (flow: Flow) => {
    if (flow.auth.request.orgId) return flow.auth.request.orgId;
    const app = ctx.clients.appByClient(flow.auth.request.clientId);
    return app?.orgId ?? ctx.instance.defaultOrgId;
  };
  // A registration signs the person in with the password just chosen: only where passwords are allowed.
  const allowRegister = (flow: Flow) => {
    const policy = loginPolicy(registrationOrgId(flow));
    return policy.allowRegister && policy.allowUsernamePassword;
  };

  const loginNameOf = (user: UserRecord | undefined, flow: Flow) => (user ? ctx.orgs.preferredLoginName(user) : (flow.auth.loginName ?? ''));
  /**
   * The name on the password page: what was typed, so the page shows the same for a known and an
   * unknown name (and never a user name behind a typed email or phone number).
   */
  const typedLoginName = (user: UserRecord | undefined, flow: Flow) => flow.auth.loginName ?? loginNameOf(user, flow);

  /** The org whose login policy a page of this request follows: the person's, else the requested org's, else the instance's. */
  const requestOrgOf = (flow: Flow, user: View<UserRecord> | undefined) => user?.orgId ?? flow.auth.request.orgId ?? INSTANCE_POLICY;
  /**
   * Whether an unverified address stops a sign-in: only while mail can go out (an active SMTP
   * configuration), since nobody could pass the step otherwise.
   */
  const mailCanVerify = () => ctx.smtpConfigs.active() !== undefined;

  /** The accounts this browser is signed in with that may answer the request. */
  const selectableAccounts = async (flow: Flow) =>
    (await usableSessions(ctx, flow.agent.agentId, flow.auth.request)).flatMap((s) => {
      const u = ctx.orgs.getUser(s.userId);
      return u ? [{ sid: s.id, displayName: u.human?.profile.displayName || u.userName, loginName: ctx.orgs.preferredLoginName(u) }] : [];
    });

  /**
   * The page of the request's step, after settling a step with nothing to offer (no account to
   * select, registration not allowed): those show the login name page instead, and stay there.
   */
  async function show(flow: Flow, error?: string, status = 200, info?: string): Promise<Response> {
    const { auth } = flow;
    const accounts = auth.step === 'select' ? await selectableAccounts(flow) : [];
    if (auth.step === 'select' && accounts.length === 0) await ctx.authRequests.offerLoginName(auth);
    if (auth.step === 'register' && !allowRegister(flow)) {
      await ctx.authRequests.offerLoginName(auth);
      return render(flow, accounts, t(flow, 'register.notAllowed'), status);
    }
    return render(flow, accounts, error, status, info);
  }

  /**
   * Renders the request's step (settled by `show`: a select step has accounts, a register step is
   * allowed); changes nothing.
   */
  async function render(flow: Flow, accounts: Awaited<ReturnType<typeof selectableAccounts>>, error?: string, status = 200, info?: string): Promise<Response> {
    const { auth, page } = flow;
    const user = auth.userId ? ctx.orgs.getUser(auth.userId) : undefined;
    switch (auth.step) {
      case 'select':
        return htmlResponse(status, selectAccountPage(page, accounts));
      case 'password':
        return htmlResponse(
          status,
          passwordPage(page, {
            loginName: typedLoginName(user, flow),
            allowReset: !loginPolicy(requestOrgOf(flow, user)).hidePasswordReset,
            // The request's providers, the same whoever the name is (the page does not tell who has a link).
            idps: auth.external ? [] : fed.buttons(flow),
            ...(error ? { error } : {}),
            ...(info ? { info } : {}),
          }),
        );
      case 'password-reset':
        return htmlResponse(status, passwordByCodePage({ page }, { kind: 'reset', loginName: typedLoginName(user, flow), error, info }));
      case 'init':
        return htmlResponse(status, passwordByCodePage({ page }, { kind: 'init', loginName: loginNameOf(user, flow), error, info }));
      case 'verify-email':
        return htmlResponse(status, verifyEmailPage({ page }, { loginName: loginNameOf(user, flow), email: maskedEmail(user?.human?.email.email ?? ''), error, info }));
      case 'password-change':
        return htmlResponse(status, passwordChangePage(page, { loginName: loginNameOf(user, flow), ...(error ? { error } : {}) }));
      case 'otp':
        return htmlResponse(status, otpPage(page, { loginName: loginNameOf(user, flow), emailInstead: user?.human?.otpEmail === true, ...(error ? { error } : {}) }));
      case 'otp-email':
        return htmlResponse(status, otpEmailPage(page, { loginName: loginNameOf(user, flow), email: maskedEmail(user?.human?.email.email ?? ''), error, info }));
      case 'mfa-setup': {
        if (!user || !auth.pendingOtpSecret) return expired(flow.agent);
        const loginName = loginNameOf(user, flow);
        const policy = loginPolicy(user.orgId);
        const factors = enrollableFactors(policy);
        const required = mfaPrompt(factsOf(user), policy, clock.now(), isExternal(auth.checks)) === 'required';
        const qrCode = await qrCodeDataUrl(otpauthUri(issuerHost, loginName, auth.pendingOtpSecret));
        return htmlResponse(
          status,
          mfaSetupPage(page, {
            loginName,
            secret: auth.pendingOtpSecret,
            qrCode,
            required,
            totp: factors.includes(OTP_SECOND_FACTOR),
            email: factors.includes(OTP_EMAIL_SECOND_FACTOR),
            u2f: factors.includes(U2F_SECOND_FACTOR),
            ...(error ? { error } : {}),
          }),
        );
      }
      case 'register':
        return htmlResponse(status, registerPage(page, {}, error));
      case 'loginname': {
        const linking = auth.external ? ctx.idps.find(auth.external.idpId, requestOrgOf(flow, undefined))?.provider.name : undefined;
        const idps = linking ? [] : fed.buttons(flow);
        return htmlResponse(
          status,
          loginNamePage(page, {
            loginName: auth.loginName ?? '',
            ...(error ? { error } : linking ? { info: t(flow, 'external.linking', { idp: linking }) } : {}),
            allowRegister: !linking && allowRegister(flow),
            idps,
            // Without passwords, a login with providers offers only them.
            allowPassword: loginPolicy(requestOrgOf(flow, undefined)).allowUsernamePassword || idps.length === 0,
          }),
        );
      }
      case 'external':
        return fed.choicePage(flow, error);
      case 'ldap':
        return fed.ldapPage(flow, error);
      case 'passkey':
      case 'u2f':
      case 'u2f-setup':
      case 'passkey-setup':
        return wa.page(flow, error);
      case 'device-consent':
      case 'consent': {
        const session = await consentSession(flow);
        const signedIn = session && ctx.orgs.getUser(session.userId);
        if (!signedIn) return expired(flow.agent);
        const selfRegistered = ctx.clients.appByClient(auth.request.clientId)?.registration !== undefined;
        return htmlResponse(
          status,
          consentPage(page, {
            device: auth.step === 'device-consent',
            selfRegistered,
            loginName: ctx.orgs.preferredLoginName(signedIn),
            scopes: auth.request.scopes,
            resources: auth.request.resources ?? [],
          }),
        );
      }
    }
  }

  /**
   * The user who passed the password in this request (or whose browser session vouches for it),
   * still active; undefined when the request must start again.
   */
  function authenticatedUser(flow: Flow): UserRecord | undefined {
    const user = flow.auth.userId ? ctx.orgs.getUser(flow.auth.userId) : undefined;
    const passedAt = firstFactorAt(flow.auth.checks);
    if (!user || flow.auth.authenticatedUserId !== user.id || passedAt === undefined) return undefined;
    // A sign-in whose first factor predates a change of the user's credentials or state (an
    // administrator's reset, a lock) is over: whoever passed the old password goes no further.
    if (predatesHorizon(user, passedAt)) return undefined;
    return ctx.orgs.isActive(user) ? user : undefined;
  }

  /**
   * After a passed step: the next one the login policy asks for, or the end. The person is read
   * again (after the awaits before: a deleted user ends the request).
   */
  async function proceed(flow: Flow, userId: string, headers: Record<string, string> = {}): Promise<Response> {
    const user = ctx.orgs.getUser(userId);
    if (!user) return expired(flow.agent);
    // The sign-in policy decides (src/domain/sign-in-policy.ts); consent and devices come once signed in.
    const { step: next } = nextSignInStep({ person: factsOf(user, mailCanVerify()), checks: flow.auth.checks, fromSession: false, policy: loginPolicy(user.orgId), now: clock.now() });
    if (next === 'done' || next === 'consent' || next === 'device-consent') return finish(flow, user, headers);
    // The code goes out as the step is entered (not again on every visit: a new one is asked for).
    if (next === 'verify-email' && !(await ctx.userCodes.pending(user.id, 'verifyEmail', clock.now()))) {
      await ctx.notifications.sendCode(user, 'verifyEmail', { authRequestId: flow.auth.id });
    }
    if (next === 'otp-email') await ctx.notifications.sendCode(user, 'otpEmail', { authRequestId: flow.auth.id });
    // Enrollment with security keys only: their page at once.
    const enrollOnlyKeys = next === 'mfa-setup' && enrollableFactors(loginPolicy(user.orgId)).every((f) => f === U2F_SECOND_FACTOR);
    await ctx.authRequests.enterStep(flow.auth, enrollOnlyKeys ? 'u2f-setup' : next);
    return backToStep(flow, headers);
  }

  /**
   * The browser gets a new cookie as soon as a password passes (session fixation): the rest of this
   * login (enrollment, a new password, the code) and the session it ends in are bound to a value
   * only this browser has, so a value planted or seen before opens nothing. Its sessions move along.
   */
  async function renewCookie(flow: Flow): Promise<Record<string, string>> {
    const fresh = newAgentCookieFor(ctx);
    // The request first: if that write fails the browser's sessions stay where its cookie finds them.
    await ctx.authRequests.rebind(flow.auth, fresh.agentId);
    await ctx.userSessions.moveAgent(flow.agent.agentId, fresh.agentId);
    flow.agent = { ...flow.agent, cookie: fresh.cookie, agentId: fresh.agentId };
    return fresh.headers;
  }

  /**
   * Signs the user in on this browser and answers the client, under a new cookie unless this
   * request already renewed it when the password passed (a session resumed for its second factor).
   */
  async function finish(flow: Flow, user: UserRecord, headers: Record<string, string> = {}): Promise<Response> {
    if (predatesHorizon(user, firstFactorAt(flow.auth.checks))) {
      await ctx.authRequests.finish(flow.auth.id);
      return expired(flow.agent);
    }
    // An account at a provider the person chose to link, now that they signed in to theirs.
    await fed.linkChosen(flow, user);
    const renewed = flow.auth.cookieRenewed ? headers : await renewCookie(flow);
    const session = await ctx.userSessions.signIn(flow.agent.agentId, user.id, flow.auth.checks, beginningAt(user), {
      by: { userId: user.id, service: 'login', address: flow.peer },
      clientId: flow.auth.request.clientId,
      orgId: user.orgId,
    });
    recordSignIn();
    return answer(flow, session, renewed);
  }

  async function answer(flow: Flow, session: View<UserSession>, headers: Record<string, string> = {}): Promise<Response> {
    // A device sign-in ends on its consent step, in this browser session; so does a sign-in to a
    // self-registered client the person has not allowed as much before (the sign-in policy's last steps).
    const user = ctx.orgs.getUser(session.userId);
    if (!user) return expired(flow.agent);
    const device = flow.auth.request.device !== undefined;
    const { step } = nextSignInStep({
      person: factsOf(user),
      checks: ctx.userSessions.checksOf(session),
      fromSession: true,
      device,
      consentNeeded: !device && (await consentNeeded(ctx, flow.auth.request, session.userId)),
      policy: loginPolicy(user.orgId),
      now: clock.now(),
    });
    if (step === 'device-consent' || step === 'consent') {
      await ctx.authRequests.askConsent(flow.auth, step, session.id);
      return backToStep(flow, headers);
    }
    await ctx.authRequests.finish(flow.auth.id);
    return completeAuthorization(ctx, flow.auth.request, session, flow.page.locale, headers);
  }

  /** The browser session a consent step (a device, a self-registered client) asks about, if it is still this browser's and live. */
  async function consentSession(flow: Flow): Promise<View<UserSession> | undefined> {
    const sid = flow.auth.consentSid;
    return (await usableSessions(ctx, flow.agent.agentId, flow.auth.request)).find((s) => s.id === sid);
  }

  /** The person allowed or denied the device: recorded for its next poll, and the sign-in request ends. */
  async function decideDeviceConsent(flow: Flow, allow: boolean): Promise<Response> {
    const session = await consentSession(flow);
    const authorization = await ctx.deviceAuthorizations.pending(flow.auth.request.device ?? '');
    if (!session || !authorization) {
      await ctx.authRequests.finish(flow.auth.id);
      return htmlResponse(400, errorPage(flow.page.locale, t(flow, 'device.invalid')));
    }
    const { decided, refusal } = await decideDevice(ctx, authorization, session, allow);
    await ctx.authRequests.finish(flow.auth.id);
    if (refusal === 'inactive' || refusal === 'org') return htmlResponse(400, errorPage(flow.page.locale, t(flow, 'error.inactive')));
    if (refusal) return htmlResponse(403, errorPage(flow.page.locale, t(flow, 'device.denied.title'), refusal.denied));
    if (!decided) return htmlResponse(400, errorPage(flow.page.locale, t(flow, 'device.invalid')));
    return htmlResponse(200, deviceDonePage(flow.page.locale, allow, flow.page.clientName));
  }

  /** The person's answer at a self-registered client's consent step: remembered when allowed; the client hears either way. */
  async function decideClientConsent(flow: Flow, allow: boolean): Promise<Response> {
    const session = await consentSession(flow);
    if (!session) return expired(flow.agent);
    await ctx.authRequests.finish(flow.auth.id);
    const request = flow.auth.request;
    if (!allow) return authorizeError(ctx, request, 'access_denied', 'the user did not allow the client', flow.page.locale);
    await ctx.consents.allow(session.userId, request.clientId, request.scopes, request.resources ?? []);
    return completeAuthorization(ctx, request, session, flow.page.locale, {}, true);
  }

  /** Who may sign in with a password for this request: an active human with a password, in the requested org. */
  function eligible(flow: Flow, user: UserRecord | undefined): user is UserRecord {
    if (!user?.human?.passwordHash) return false;
    if (flow.auth.request.orgId !== undefined && user.orgId !== flow.auth.request.orgId) return false;
    // The user's own state is checked after the password (a locked account gets its own answer).
    return ctx.orgs.orgIsActive(user.orgId);
  }

  /**
   * The person a login name names: `user@org-domain` or a unique user name, else a verified email
   * or phone number unless the person's login policy disables that (`disableLoginWithEmail` / `…Phone`).
   */
  function findLoginUser(flow: Flow, loginName: string): UserRecord | undefined {
    const byName = ctx.orgs.findUserByLoginName(loginName);
    if (byName) return byName;
    const orgId = flow.auth.request.orgId;
    const matches = ctx.orgs.findUsersByContact(loginName).filter((u) => orgId === undefined || u.orgId === orgId);
    if (matches.length !== 1) return undefined;
    const user = matches[0]!;
    const policy = loginPolicy(user.orgId);
    return (loginName.trim().startsWith('+') ? policy.disableLoginWithPhone : policy.disableLoginWithEmail) ? undefined : user;
  }

  /**
   * A sign-in that changed nothing stored (a name nobody may sign in with, an account locked before
   * the check) in the activity log: what was typed (bounded), from which address.
   */
  function failedSignIn(flow: Flow, user: View<UserRecord> | undefined, reason: 'unknown' | 'locked'): Promise<void> {
    const payload = { loginName: (flow.auth.loginName ?? '').slice(0, 200), reason };
    const event = user
      ? { type: 'user.human.signin.refused', aggregateType: 'user', aggregateId: user.id, resourceOwner: user.orgId, payload }
      : { type: 'instance.signin.failed', aggregateType: 'instance', aggregateId: '', resourceOwner: flow.auth.request.orgId ?? '', payload };
    return ctx.activity.record([event], { userId: user?.id ?? '', service: 'login', address: flow.peer });
  }

  /**
   * The password step: the login's decisions check and count it in the store (one check of a user
   * at a time whichever thread received it); this page only tells the outcome.
   */
  async function checkPassword(flow: Flow, password: string | undefined): Promise<Response> {
    const candidate = flow.auth.userId ? ctx.orgs.getUser(flow.auth.userId) : undefined;
    // Nobody eligible: the same work and the same answer as a wrong password (the page does not tell who exists).
    const check = await ctx.loginDirectory.from(flow.peer).checkPassword(eligible(flow, candidate) ? candidate.id : undefined, password ?? '');
    switch (check.result) {
      case 'locked':
        recordSignInFailure('locked');
        await failedSignIn(flow, check.user, 'locked');
        return show(flow, t(flow, lockedText(check.user)));
      case 'wrong':
        recordSignInFailure('password');
        // A wrong password of a person is logged as their failure count's change (model/row-events.ts); a name nobody may sign in with, here.
        if (!check.user) await failedSignIn(flow, undefined, 'unknown');
        return show(flow, t(flow, check.locked && check.user ? lockedText(check.user) : 'password.invalid'));
      case 'notAllowed':
        return show(flow, t(flow, 'password.notAllowed'));
    }
    const { user, checkedAt } = check;
    // The request may have switched to another login name while the hash was checked.
    if ((await ctx.authRequests.get(flow.auth.id, flow.agent.agentId))?.userId !== user.id) return expired(flow.agent);
    // A new password check: the second factor is asked for again too.
    await ctx.authRequests.passPassword(flow.auth, user.id, checkedAt);
    return proceed(flow, user.id, await renewCookie(flow));
  }

  /** A wrong TOTP code: counted per request (5 end it), per user (10 per 15 min) and against maxOtpAttempts. */
  async function otpFailure(flow: Flow, user: UserRecord): Promise<Response> {
    recordSignInFailure('otp');
    // Per user it was counted when the attempt was taken (takeOtpAttempt); per request in the store, so
    // parallel wrong codes all count; against the lockout policy on the person as stored, which also
    // tells a sign-in that ended meanwhile (a parallel code locked the person).
    const passedAt = firstFactorAt(flow.auth.checks)!;
    const [failures, { locked, over }] = await Promise.all([ctx.authRequests.failOtp(flow.auth), ctx.loginDirectory.from(flow.peer).recordOtpFailure(user.id, passedAt)]);
    if (over) return expired(flow.agent);
    if (locked || failures >= MAX_OTP_FAILURES_PER_REQUEST) {
      // Locked by wrong codes after a right password: the password is known to someone, so the sessions end.
      await Promise.all([ctx.authRequests.finish(flow.auth.id), locked ? endSessionsOfUser(ctx, user.id) : undefined]);
      return locked ? htmlResponse(400, errorPage(flow.page.locale, t(flow, lockedText(user)))) : expired(flow.agent);
    }
    return show(flow, t(flow, 'otp.invalid'));
  }

  /** A code that matches `secret` now and was not used before by this user: its time step. */
  async function acceptCode(user: UserRecord, secret: string, code: string | undefined): Promise<number | undefined> {
    const step = verifyTotp(secret, (code ?? '').replace(/\s+/g, ''));
    return step === undefined || !(await ctx.loginSecurity.otpStepUnused(user.id, step)) ? undefined : step;
  }

  /**
   * A second factor's check (TOTP, or a code by email): one decision takes the attempt (counted as
   * wrong until a right code takes it back), so parallel codes on any thread cannot pass the block
   * together; `passes` checks the code and uses it up; a right one passes the step.
   */
  async function checkSecondFactor(flow: Flow, user: View<UserRecord>, passes: () => Promise<boolean>): Promise<Response> {
    const attempt = await ctx.loginSecurity.takeOtpAttempt(user.id);
    if (attempt === undefined) {
      recordSignInFailure('locked');
      return show(flow, t(flow, lockedText(user, 'otp.invalid')));
    }
    const checkedAt = beginningAt(user);
    if (!(await passes())) return otpFailure(flow, user);
    // The person as stored has the last word: a parallel request on another thread may have locked them.
    if (!(await ctx.loginDirectory.from(flow.peer).recordOtpSuccess(user.id, firstFactorAt(flow.auth.checks)!))) return expired(flow.agent);
    await ctx.authRequests.passOtp(flow.auth, checkedAt);
    return proceed(flow, user.id);
  }

  async function checkOtp(flow: Flow, code: string | undefined): Promise<Response> {
    const user = authenticatedUser(flow);
    // The password must have been passed by this very user in this request.
    const sealed = user?.human?.otpSecretSealed;
    if (!user || !sealed) return expired(flow.agent);
    return checkSecondFactor(flow, user, async () => {
      const step = await acceptCode(user, openOtpSecret(ctx.masterKey, sealed), code);
      // The step is used up at once (a parallel request with the same code fails), durably; the wrong codes are forgotten.
      return step !== undefined && (await ctx.loginSecurity.passOtp(user.id, step));
    });
  }

  /** TOTP enrollment: the code proves the app holds the secret shown; then it is the user's second factor. */
  async function confirmOtpSetup(flow: Flow, code: string | undefined): Promise<Response> {
    const user = authenticatedUser(flow);
    const secret = flow.auth.pendingOtpSecret;
    if (!user?.human || !secret) return expired(flow.agent);
    // Only a factor the org's login policy allows is enrolled.
    if (!enrollableFactors(loginPolicy(user.orgId)).includes(OTP_SECOND_FACTOR)) return show(flow);
    if (user.human.otpSecretSealed) return proceed(flow, user.id);
    // One decision takes the attempt (counted as wrong until a right code takes it back): parallel codes on any thread cannot pass the block together.
    const attempt = await ctx.loginSecurity.takeOtpAttempt(user.id);
    if (attempt === undefined) {
      recordSignInFailure('locked');
      return show(flow, t(flow, lockedText(user, 'otp.invalid')));
    }
    const checkedAt = beginningAt(user);
    const step = await acceptCode(user, secret, code);
    if (step === undefined || !(await ctx.loginSecurity.useOtpStepForEnrollment(user.id, step, attempt))) return otpFailure(flow, user);
    // Still this sign-in's (an administrator's reset or lock meanwhile ends it): no factor is enrolled for it.
    if (!authenticatedUser(flow)) return expired(flow.agent);
    try {
      const enrolled = await ctx.loginDirectory.from(flow.peer).enrollOtp(user.id, sealOtpSecret(ctx.masterKey, secret), firstFactorAt(flow.auth.checks)!);
      if (!enrolled) return expired(flow.agent);
    } catch (error) {
      // Enrolled meanwhile (another tab): this code proves the other secret, so ask for the enrolled one.
      if (!(error instanceof ApiError && error.kind === 'AlreadyExists')) throw error;
      await ctx.authRequests.leaveOtpSetup(flow.auth);
      return proceed(flow, user.id);
    }
    await ctx.authRequests.passOtp(flow.auth, checkedAt);
    return proceed(flow, user.id);
  }

  async function skipOtpSetup(flow: Flow): Promise<Response> {
    const user = authenticatedUser(flow);
    if (!user?.human) return expired(flow.agent);
    const prompt = mfaPrompt(factsOf(user), loginPolicy(user.orgId), clock.now(), isExternal(flow.auth.checks));
    if (prompt === 'required') return show(flow, t(flow, 'mfa.skipNotAllowed'));
    if (prompt === 'optional') await ctx.loginDirectory.from(flow.peer).skipMfaInit(user.id, clock.now());
    await ctx.authRequests.leaveOtpSetup(flow.auth);
    return proceed(flow, user.id);
  }

  /** What is wrong with a new password and its confirmation (registration, a change, a reset), under the org's complexity policy: the page's text. */
  function newPasswordProblem(flow: Flow, form: Form, orgId: string): string | undefined {
    const password = form.get('password') ?? '';
    const policy = ctx.orgs.policy('passwordComplexity', orgId).policy;
    const rule = brokenComplexityRule(password, policy);
    if (rule === 'minLength') return t(flow, 'register.password.short', { min: String(policy.minLength) });
    if (rule) return t(flow, `password.rule.${rule}`);
    return password === form.get('passwordConfirm') ? undefined : t(flow, 'register.password.mismatch');
  }

  /** `passwordChangeRequired`: the person chooses a new password right after passing the old one. */
  async function changePassword(flow: Flow, form: Form): Promise<Response> {
    const user = authenticatedUser(flow);
    if (!user?.human) return expired(flow.agent);
    const password = form.get('password') ?? '';
    const problem = newPasswordProblem(flow, form, user.orgId);
    if (problem) return show(flow, problem);
    // Set only if still this sign-in's after the hashing (an administrator's reset meanwhile ends it):
    // else the person who passed the old password would replace the password just reset.
    const changed = await ctx.loginDirectory.from(flow.peer).changePassword(user.id, password, firstFactorAt(flow.auth.checks)!);
    if (!changed) return expired(flow.agent);
    // The new password voids what the old one opened (the revocation horizon): the other browser
    // sessions end too, and their apps are told. This sign-in goes on as a check of the new one.
    await Promise.all([afterNewPassword(ctx, changed), ctx.authRequests.renewPasswordCheck(flow.auth, beginningAt(changed))]);
    return proceed(flow, user.id);
  }

  async function register(flow: Flow, form: Form): Promise<Response> {
    if (!allowRegister(flow)) return show(flow);
    const values: RegisterValues = {
      firstName: form.get('firstName')?.trim() ?? '',
      lastName: form.get('lastName')?.trim() ?? '',
      email: form.get('email')?.trim() ?? '',
      userName: form.get('userName')?.trim() ?? '',
    };
    const password = form.get('password') ?? '';
    const fail = (key: TextKey) => htmlResponse(200, registerPage(flow.page, values, t(flow, key)));
    if (!values.firstName || !values.lastName || !values.email || !values.userName) return fail('register.missing');
    if ([values.firstName, values.lastName, values.userName].some((v) => v!.length > 200) || !EMAIL.test(values.email) || values.email.length > 200) {
      return fail('register.email.invalid');
    }
    const problem = newPasswordProblem(flow, form, registrationOrgId(flow));
    if (problem) return htmlResponse(200, registerPage(flow.page, values, problem));
    // The privacy policy's terms: accepted, or no account.
    if (termsToAccept(flow.page) && form.get('acceptTerms') !== 'yes') return fail('register.termsNotAccepted');
    let user: View<UserRecord>;
    try {
      user = await ctx.loginDirectory.from(flow.peer).register(
        registrationOrgId(flow),
        {
          userName: values.userName!,
          profile: { firstName: values.firstName!, lastName: values.lastName!, nickName: '', preferredLanguage: flow.page.locale, gender: 'GENDER_UNSPECIFIED' },
          email: { email: values.email!, isEmailVerified: false },
        },
        password,
      );
    } catch (error) {
      if (error instanceof ApiError && (error.kind === 'AlreadyExists' || error.kind === 'InvalidArgument')) return fail('register.taken');
      throw error;
    }
    await ctx.authRequests.passPassword(flow.auth, user.id, beginningAt(user));
    return proceed(flow, user.id, await renewCookie(flow));
  }

  // ---- codes sent by mail: a password reset, an account's initialization, an email verification ----

  /** Sends a code of the sign-in's person; the page says a code is on its way, or that too many went. */
  async function resend(flow: Flow, req: Request, purpose: 'verifyEmail' | 'init'): Promise<Response> {
    const user = flow.auth.userId ? ctx.orgs.getUser(flow.auth.userId) : undefined;
    if (!user) return expired(flow.agent);
    const { outcome } = await ctx.notifications.sendCode(user, purpose, { authRequestId: flow.auth.id, clientAddress: req.peer ?? '' });
    return outcome === 'limited' ? show(flow, t(flow, 'code.limited')) : show(flow, undefined, 200, t(flow, 'code.sent'));
  }

  /**
   * A code page's form came back: within this browser's sign-in (authRequestID and CSRF token), or
   * from a mailed link opened elsewhere (userID; the code is what proves it, so no CSRF token).
   */
  type CodeForm = { flow: Flow; form: Form; user: View<UserRecord> | undefined } | { flow: undefined; form: Form; user: View<UserRecord> | undefined; locale: Locale };
  async function codeForm(req: Request, step: LoginStep): Promise<CodeForm | Response> {
    const form = parseFormBody(req.headers['content-type'], req.body);
    if (form.get('authRequestID')) {
      const flow = await flowOf(req, form);
      if (!('auth' in flow)) return flow;
      if (flow.auth.step !== step) return backToStep(flow);
      return { flow, form, user: flow.auth.userId ? ctx.orgs.getUser(flow.auth.userId) : undefined };
    }
    const userId = (form.get('userID') ?? '').slice(0, 200);
    return { flow: undefined, form, user: userId ? ctx.orgs.getUser(userId) : undefined, locale: agentOf(ctx, req).locale };
  }

  /** A code page opened from a mailed link (GET, nothing changes): in this browser's sign-in when it is the link's, else on its own. */
  async function linkPage(req: Request, step: LoginStep, render: (target: CodeFormTarget, code: string, flow: Flow | undefined) => string): Promise<Response> {
    const query = parseUrlEncoded(req.query);
    const code = (query.get('code') ?? '').slice(0, 20);
    const userId = (query.get('userID') ?? '').slice(0, 200);
    const agent = agentOf(ctx, req);
    const id = query.get('authRequestID');
    const auth = id && agent.agentId ? await ctx.authRequests.get(id, agent.agentId) : undefined;
    if (auth && auth.userId === userId) {
      const flow = await flowOf(req, undefined);
      if ('auth' in flow) {
        if (flow.auth.step !== step) await ctx.authRequests.enterStep(flow.auth, step);
        return htmlResponse(200, render({ page: flow.page }, code, flow));
      }
    }
    const linked = userId ? ctx.orgs.getUser(userId) : undefined;
    return htmlResponse(200, render({ locale: agent.locale, userId, brand: brandOf(linked?.orgId ?? INSTANCE_POLICY, linked) }, code, undefined));
  }

  const codeError = (target: CodeForm, render: (target: CodeFormTarget, error: string) => string, key: TextKey | string, raw = false) => {
    const locale = target.flow ? target.flow.page.locale : target.locale;
    const message = raw ? key : translator(locale)(key as TextKey);
    return htmlResponse(200, render(target.flow ? { page: target.flow.page } : { locale, userId: target.user?.id ?? '', brand: brandOf(target.user?.orgId ?? INSTANCE_POLICY, target.user) }, message));
  };

  /**
   * A new password with a mailed code (a reset, or an initialization): the password is checked
   * against the org's complexity policy before the code is used; the code is used once; then the
   * person signs in with the new password (what the old one opened has ended).
   */
  async function passwordByCode(req: Request, kind: 'reset' | 'init'): Promise<Response> {
    const step: LoginStep = kind === 'reset' ? 'password-reset' : 'init';
    const purpose = kind === 'reset' ? 'passwordReset' : 'init';
    const target = await codeForm(req, step);
    if (!('form' in target)) return target;
    const { form, user, flow } = target;
    const code = (form.get('code') ?? '').slice(0, 20);
    const page = (to: CodeFormTarget, error: string) => passwordByCodePage(to, { kind, code, error, loginName: flow ? typedLoginName(user, flow) : undefined });
    const locale = flow ? flow.page.locale : (target as { locale: Locale }).locale;
    const pseudoFlow = flow ?? ({ page: { locale } } as Flow);
    const problem = newPasswordProblem(pseudoFlow, form, user?.orgId ?? flow?.auth.request.orgId ?? INSTANCE_POLICY);
    if (problem) return codeError(target, page, problem, true);
    // A reset ends the person's sessions and sign-ins in progress (the revocation horizon moved).
    const changed = user?.human ? await setPasswordWithCode(ctx, user.id, purpose, code, form.get('password') ?? '', ctx.loginDirectory.from(req.peer)) : undefined;
    if (!changed || !user) return codeError(target, page, 'code.invalid');
    if (!flow) return htmlResponse(200, donePage(locale, t(pseudoFlow, `${kind}.done.title`), t(pseudoFlow, `${kind}.done.intro`), brandOf(user.orgId, user)));
    const current = await ctx.authRequests.get(flow.auth.id, flow.agent.agentId);
    if (!current) return expired(flow.agent);
    await ctx.authRequests.enterStep(current, 'password');
    return show({ ...flow, auth: { ...current, step: 'password' } }, undefined, 200, t(flow, `${kind}.done.signIn`));
  }

  /** The mailed code proves the address: verified (if it is still the person's), and the sign-in goes on. */
  async function verifyEmailByCode(req: Request): Promise<Response> {
    const target = await codeForm(req, 'verify-email');
    if (!('form' in target)) return target;
    const { form, user, flow } = target;
    const code = (form.get('code') ?? '').slice(0, 20);
    const page = (to: CodeFormTarget, error: string) => verifyEmailPage(to, { code, error, loginName: flow && user ? loginNameOf(user, flow) : undefined });
    if (flow && (!user || authenticatedUser(flow)?.id !== user.id)) return expired(flow.agent);
    const redeemed = user?.human ? await ctx.userCodes.redeem(user.id, 'verifyEmail', code, clock.now()) : { result: 'none' as const };
    const verified = redeemed.result === 'ok' && user ? await ctx.loginDirectory.from(req.peer).verifyEmail(user.id, redeemed.subject) : undefined;
    if (!verified) return codeError(target, page, 'code.invalid');
    if (!flow) {
      const locale = (target as { locale: Locale }).locale;
      return htmlResponse(200, donePage(locale, translator(locale)('verifyEmail.done.title'), translator(locale)('verifyEmail.done.intro'), brandOf(verified.orgId, verified)));
    }
    return proceed(flow, verified.id);
  }

  /** The second factor by email: the code mailed for this sign-in, counted like a TOTP code (maxOtpAttempts). */
  async function checkOtpEmail(flow: Flow, code: string | undefined): Promise<Response> {
    const user = authenticatedUser(flow);
    if (!user?.human?.otpEmail) return expired(flow.agent);
    return checkSecondFactor(flow, user, async () => {
      const redeemed = await ctx.userCodes.redeem(user.id, 'otpEmail', (code ?? '').replace(/\s+/g, ''), clock.now());
      if (redeemed.result !== 'ok') return false;
      // A right code takes back the attempt counted for it, and the wrong ones before it.
      await ctx.loginSecurity.passOtherCode(user.id);
      return true;
    });
  }

  /** Enrolls codes by email as the person's second factor (their address verified); this sign-in then checks one. */
  async function enrollOtpEmail(flow: Flow): Promise<Response> {
    const user = authenticatedUser(flow);
    if (!user?.human) return expired(flow.agent);
    if (!enrollableFactors(loginPolicy(user.orgId)).includes(OTP_EMAIL_SECOND_FACTOR)) return show(flow);
    if (!user.human.email.isEmailVerified) return show(flow, t(flow, 'mfa.email.unverified'));
    const enrolled = await ctx.loginDirectory.from(flow.peer).enrollOtpEmail(user.id, firstFactorAt(flow.auth.checks)!);
    if (!enrolled) return expired(flow.agent);
    await ctx.authRequests.leaveOtpSetup(flow.auth);
    return proceed(flow, user.id);
  }

  function mailCodeRoutes(): Route[] {
    return [
      route('/ui/login/otp/email', { POST: atStep('otp-email', (flow, form) => checkOtpEmail(flow, form.get('code'))) }),
      route('/ui/login/otp/email/resend', {
        POST: atStep('otp-email', async (flow, _form, req) => {
          const user = authenticatedUser(flow);
          if (!user) return expired(flow.agent);
          const { outcome } = await ctx.notifications.sendCode(user, 'otpEmail', { authRequestId: flow.auth.id, clientAddress: req.peer ?? '' });
          return outcome === 'limited' ? show(flow, t(flow, 'code.limited')) : show(flow, undefined, 200, t(flow, 'code.sent'));
        }),
      }),
      route('/ui/login/otp/email/switch', {
        POST: atStep('otp', async (flow) => {
          const user = authenticatedUser(flow);
          if (!user?.human?.otpEmail) return backToStep(flow);
          await ctx.notifications.sendCode(user, 'otpEmail', { authRequestId: flow.auth.id });
          await ctx.authRequests.enterStep(flow.auth, 'otp-email');
          return backToStep(flow);
        }),
      }),
      route('/ui/login/mfa/email', { POST: atStep('mfa-setup', (flow) => enrollOtpEmail(flow)) }),
      route('/ui/login/password/reset', {
        // "Forgot your password?": the same page whether or not the person exists or has an address.
        POST: atStep('password', async (flow, _form, req) => {
          const user = flow.auth.userId ? ctx.orgs.getUser(flow.auth.userId) : undefined;
          if (loginPolicy(requestOrgOf(flow, user)).hidePasswordReset) return show(flow);
          if (user?.human && user.state !== 'USER_STATE_INITIAL' && ctx.orgs.orgIsActive(user.orgId)) {
            // Not waited for: the answer takes as long whether or not there is someone to mail (the
            // code is for the mailbox, not for this response).
            ctx.notifications
              .sendCode(user, 'passwordReset', { authRequestId: flow.auth.id, clientAddress: req.peer ?? '' })
              .catch((error: unknown) => log.warn('password reset: the code could not be queued', { userId: user.id, error: String(error) }));
          }
          await ctx.authRequests.enterStep(flow.auth, 'password-reset');
          return backToStep(flow);
        }),
      }),
      route('/ui/login/password/init', {
        GET: (req) =>
          linkPage(req, 'password-reset', (target, code, flow) =>
            passwordByCodePage(target, { kind: 'reset', code, loginName: flow ? typedLoginName(flow.auth.userId ? ctx.orgs.getUser(flow.auth.userId) : undefined, flow) : undefined }),
          ),
        POST: (req) => passwordByCode(req, 'reset'),
      }),
      route('/ui/login/user/init', {
        GET: (req) => linkPage(req, 'init', (target, code) => passwordByCodePage(target, { kind: 'init', code })),
        POST: (req) => passwordByCode(req, 'init'),
      }),
      route('/ui/login/user/init/resend', { POST: atStep('init', (flow, _form, req) => resend(flow, req, 'init')) }),
      route('/ui/login/mail/verification', {
        GET: (req) => linkPage(req, 'verify-email', (target, code) => verifyEmailPage(target, { code })),
        POST: (req) => verifyEmailByCode(req),
      }),
      route('/ui/login/mail/verification/resend', { POST: atStep('verify-email', (flow, _form, req) => resend(flow, req, 'verifyEmail')) }),
    ];
  }

  /** Wraps a POST handler: form parsing, auth request and CSRF checks. */
  const post = (handler: (flow: Flow, form: Form, req: Request) => Response | Promise<Response>) => async (req: Request) => {
    const form = parseFormBody(req.headers['content-type'], req.body);
    const flow = await flowOf(req, form);
    if (!('auth' in flow)) return flow;
    return handler(flow, form, req);
  };

  /** A POST that belongs to one step; any other step sends the browser back to where the request is. */
  const atStep = (step: LoginStep, handler: (flow: Flow, form: Form, req: Request) => Response | Promise<Response>) =>
    post((flow, form, req) => (flow.auth.step === step ? handler(flow, form, req) : backToStep(flow)));

  const get = (handler: (flow: Flow, req: Request) => Response | Promise<Response>) => async (req: Request) => {
    const flow = await flowOf(req, undefined);
    if (!('auth' in flow)) return flow;
    return handler(flow, req);
  };

  // The browser's address: the activity log's record of where a sign-in (or a failed one) came from.
  const route = (pattern: string, methods: Route['methods']): Route => ({ pattern, errorStyle: 'html', methods, peerAddress: true });

  const kit = { flowOf, show, proceed, renewCookie, expired, backToStep, t, post, atStep, route, registrationOrgId };
  const fed = federation<Flow>(ctx, kit);
  const wa = webauthnLogin<Flow>(ctx, {
    ...kit,
    authenticatedUser,
    loginNameOf: (user, flow) => loginNameOf(user as UserRecord, flow),
    // A passkey signs in people without a password too: a person of the requested org, in an active org.
    eligible: (flow, user) => user?.human !== undefined && (flow.auth.request.orgId === undefined || user.orgId === flow.auth.request.orgId) && ctx.orgs.orgIsActive(user.orgId),
    sendOtpEmail: (flow, user) => ctx.notifications.sendCode(user, 'otpEmail', { authRequestId: flow.auth.id }),
    skipEnrollment: (flow) => skipOtpSetup(flow),
  });

  return [
    route(LOGIN_PATH, {
      GET: get(async (flow, req) => {
        if (parseUrlEncoded(req.query).get('step') === 'loginname') await ctx.authRequests.backToLoginName(flow.auth);
        // `urn:zitadel:iam:org:idp:id:{id}`: straight to that provider (once).
        const hinted = flow.auth.step === 'loginname' ? fed.hintedProvider(flow) : undefined;
        if (hinted) return fed.startAt(flow, hinted);
        // Enrollment entered from the authorization endpoint (a session without the now required factor).
        if (flow.auth.step === 'mfa-setup' && !flow.auth.pendingOtpSecret) await ctx.authRequests.enterStep(flow.auth, 'mfa-setup');
        return show(flow);
      }),
    }),
    route('/ui/login/loginname', {
      POST: post(async (flow, form, req) => {
        const loginName = (form.get('loginName') ?? '').trim().slice(0, 300);
        if (!loginName) return show(flow, t(flow, 'password.invalid'));
        const user = findLoginUser(flow, loginName);
        if (!user?.human || (flow.auth.request.orgId !== undefined && user.orgId !== flow.auth.request.orgId)) {
          // `ignoreUnknownUsernames` (of the requested org, else the instance default): whether an
          // unknown name is told here, or gets the wrong-password answer at the password step.
          const policy = flow.auth.request.orgId ? loginPolicy(flow.auth.request.orgId) : DEFAULT_POLICIES.login;
          if (!policy.ignoreUnknownUsernames) {
            await ctx.authRequests.rememberLoginName(flow.auth, loginName);
            return show(flow, t(flow, 'login.unknown'));
          }
        }
        await ctx.authRequests.chooseUser(flow.auth, loginName, user?.id);
        // The sign-in policy: a person made without a password sets one with a mailed code first (ZITADEL's init step).
        const chosen = user?.human && ctx.orgs.orgIsActive(user.orgId) ? factsOf(user) : undefined;
        const { step } = nextSignInStep({ person: chosen, unknownLoginNameTyped: !chosen, checks: {}, fromSession: false, policy: loginPolicy(user?.orgId ?? INSTANCE_POLICY), now: clock.now() });
        // A person with a passkey (passwordlessType ALLOWED) is offered it before the password.
        if (step === 'password' && user && chosen && wa.offersPasskey(user)) {
          const current = await ctx.authRequests.get(flow.auth.id, flow.agent.agentId);
          if (!current) return expired(flow.agent);
          await ctx.authRequests.enterStep(current, 'passkey');
        }
        if (step === 'init' && user) {
          const current = await ctx.authRequests.get(flow.auth.id, flow.agent.agentId);
          if (!current) return expired(flow.agent);
          if (!(await ctx.userCodes.pending(user.id, 'init', clock.now()))) await ctx.notifications.sendCode(user, 'init', { authRequestId: flow.auth.id, clientAddress: req.peer ?? '' });
          await ctx.authRequests.enterStep(current, 'init');
        }
        return backToStep(flow);
      }),
    }),
    route('/ui/login/loginname/change', {
      POST: post(async (flow) => {
        await ctx.authRequests.backToLoginName(flow.auth);
        return backToStep(flow);
      }),
    }),
    route('/ui/login/password', { POST: atStep('password', (flow, form) => checkPassword(flow, form.get('password'))) }),
    ...mailCodeRoutes(),
    ...fed.routes,
    ...wa.routes,
    route('/ui/login/password/change', { POST: atStep('password-change', (flow, form) => changePassword(flow, form)) }),
    route('/ui/login/otp', { POST: atStep('otp', (flow, form) => checkOtp(flow, form.get('code'))) }),
    route('/ui/login/mfa/verify', { POST: atStep('mfa-setup', (flow, form) => confirmOtpSetup(flow, form.get('code'))) }),
    route('/ui/login/mfa/skip', { POST: atStep('mfa-setup', (flow) => skipOtpSetup(flow)) }),
    route('/ui/login/device/consent', {
      POST: atStep('device-consent', (flow, form) => decideDeviceConsent(flow, form.get('decision') === 'allow')),
    }),
    route('/ui/login/consent', {
      POST: atStep('consent', (flow, form) => decideClientConsent(flow, form.get('decision') === 'allow')),
    }),
    route('/ui/login/select', {
      POST: post(async (flow, form) => {
        const sid = form.get('sid');
        const session = (await usableSessions(ctx, flow.agent.agentId, flow.auth.request)).find((s) => s.id === sid);
        if (!session) {
          await ctx.authRequests.backToLoginName(flow.auth);
          return backToStep(flow);
        }
        const request = flow.auth.request;
        const requirement = request.prompt.has('login') ? 'password' : sessionRequirementOf(ctx, session, request);
        if (requirement === 'ok') return answer(flow, session);
        const resume = resumeSession(ctx, session, requirement);
        await ctx.authRequests.resumeSession(flow.auth, resume.step, resume.userId, resume.checks);
        return backToStep(flow);
      }),
    }),
    route('/ui/login/register', {
      GET: get(async (flow) => {
        await ctx.authRequests.startRegistration(flow.auth);
        return show(flow);
      }),
      POST: post((flow, form) => register(flow, form)),
    }),
    route('/ui/login/logout/done', {
      GET: (req) => htmlResponse(200, signedOutPage(agentOf(ctx, req, parseUrlEncoded(req.query).get('ui_locales')).locale)),
    }),
    route(LABEL_STYLESHEET_PATH, {
      GET: (req): Response => {
        const owner = req.params[0] === 'instance' ? INSTANCE_POLICY : (req.params[0] ?? '');
        if (owner !== INSTANCE_POLICY && !ctx.orgs.getOrg(owner)) return { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: 'not found' };
        const label = ctx.orgs.policy('label', owner).policy;
        return {
          status: 200,
          headers: { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=300' },
          body: labelStylesheet(label, label.font ? assetPath(label.font) : undefined),
        };
      },
    }),
    route(ASSET_PATH, {
      // A label policy's image or font, by its digest: public (pages and mails show them), never changes.
      GET: async (req): Promise<Response> => {
        const asset = await ctx.labelAssets.get(req.params[0] ?? '');
        if (!asset) return { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: 'not found' };
        return {
          status: 200,
          headers: { 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'" },
          body: Buffer.from(asset.bytes),
        };
      },
    }),
    route(STYLESHEET_PATH, {
      GET: () => ({ status: 200, headers: { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600' }, body: STYLESHEET }),
    }),
  ];
}
