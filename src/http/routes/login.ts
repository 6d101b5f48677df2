import type { AuthRequest } from '../../actors/auth-requests.js';
import type { UserSession } from '../../actors/user-sessions.js';
import { verifyTotp } from '../../auth/totp.js';
import { agentOf, type Agent } from '../../login/agent.js';
import { completeAuthorization, isFresh, usableSessions } from '../../login/respond.js';
import { ApiError } from '../../model/errors.js';
import type { UserRecord } from '../../model/records.js';
import { parseFormBody, parseUrlEncoded, type Form } from '../../oauth/form.js';
import { translator, type TextKey } from '../../ui/i18n.js';
import {
  errorPage,
  loginNamePage,
  otpPage,
  passwordPage,
  registerPage,
  selectAccountPage,
  signedOutPage,
  type PageContext,
  type RegisterValues,
} from '../../ui/pages.js';
import { STYLESHEET, STYLESHEET_PATH } from '../../ui/styles.js';
import type { AppContext } from '../context.js';
import { csrfToken, csrfValid } from '../csrf.js';
import { htmlResponse, redirectResponse } from '../html.js';
import type { Request, Response, Route } from '../types.js';
import { LOGIN_PATH } from './authorize.js';
import { AttemptLimiter, KeyedQueue } from '../../login/attempt-limiter.js';

/**
 * The login UI under /ui/login/: plain HTML forms (no JavaScript), each bound to an auth request
 * and the user-agent cookie, with a CSRF token. Steps: login name → password → TOTP (when the user
 * has one) or account selection / registration; the last step answers the client.
 */
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const MAX_PASSWORD = 1024;
const MAX_OTP_FAILURES_PER_REQUEST = 5;

interface Flow {
  agent: Agent & { cookie: string; agentId: string };
  auth: AuthRequest;
  page: PageContext;
}

export function loginRoutes(ctx: AppContext): Route[] {
  const csrfKey = ctx.masterKey.deriveKey('login-csrf');
  /** Last TOTP time step used per user: a code is accepted once. */
  const lastOtpStep = new Map<string, number>();
  /** A hash that never matches, verified for unknown users so they cost the same time as known ones. */
  let dummyHash: Promise<string> | undefined;
  /** One password check per user at a time, so lockout counts every guess (no parallel bursts). */
  const passwordChecks = new KeyedQueue();
  /** Wrong TOTP codes per user across all login requests: 10 per 15 minutes. */
  const otpLimiter = new AttemptLimiter(10, 15 * 60_000);

  const t = (flow: Flow, key: TextKey) => translator(flow.page.locale)(key);

  const expired = (agent: Agent) =>
    htmlResponse(400, errorPage(agent.locale, translator(agent.locale)('error.expired')));

  /** The auth request of a request, if it belongs to this browser. */
  function flowOf(req: Request, form: Form | undefined): Flow | Response {
    const agent = agentOf(ctx, req);
    const id = form?.get('authRequestID') ?? parseUrlEncoded(req.query).get('authRequestID');
    const auth = id && agent.agentId ? ctx.authRequests.get(id, agent.agentId) : undefined;
    if (!auth || !agent.cookie || !agent.agentId) return expired(agent);
    if (form && !csrfValid(csrfKey, agent.cookie, auth.id, form.get('csrf'))) {
      return htmlResponse(403, errorPage(auth.locale, translator(auth.locale)('error.csrf')));
    }
    const app = ctx.clients.appByClient(auth.request.clientId);
    return {
      agent: { ...agent, cookie: agent.cookie, agentId: agent.agentId, locale: auth.locale },
      auth,
      page: { locale: auth.locale, clientName: app?.name ?? auth.request.clientId, authRequestId: auth.id, csrf: csrfToken(csrfKey, agent.cookie, auth.id) },
    };
  }

  const backToStep = (flow: Flow) => redirectResponse(`${LOGIN_PATH}?authRequestID=${flow.auth.id}`, {}, 303);

  const registrationOrgId = (flow: Flow) => {
    if (flow.auth.request.orgId) return flow.auth.request.orgId;
    const app = ctx.clients.appByClient(flow.auth.request.clientId);
    return app?.orgId ?? ctx.instance.defaultOrgId;
  };
  const allowRegister = (flow: Flow) => ctx.orgs.policy('login', registrationOrgId(flow)).policy.allowRegister;

  const loginNameOf = (user: UserRecord | undefined, flow: Flow) => (user ? ctx.orgs.preferredLoginName(user) : flow.auth.loginName ?? '');

  function render(flow: Flow, error?: string, status = 200): Response {
    const { auth, page } = flow;
    const user = auth.userId ? ctx.orgs.getUser(auth.userId) : undefined;
    switch (auth.step) {
      case 'select': {
        const accounts = usableSessions(ctx, flow.agent.agentId, auth.request).flatMap((s) => {
          const u = ctx.orgs.getUser(s.userId);
          return u ? [{ sid: s.id, displayName: u.human?.profile.displayName || u.userName, loginName: ctx.orgs.preferredLoginName(u) }] : [];
        });
        if (accounts.length > 0) return htmlResponse(status, selectAccountPage(page, accounts));
        ctx.authRequests.update(auth, { step: 'loginname' });
        return render(flow, error, status);
      }
      case 'password':
        return htmlResponse(status, passwordPage(page, { loginName: loginNameOf(user, flow), ...(error ? { error } : {}) }));
      case 'otp':
        return htmlResponse(status, otpPage(page, { loginName: loginNameOf(user, flow), ...(error ? { error } : {}) }));
      case 'register':
        if (!allowRegister(flow)) {
          ctx.authRequests.update(auth, { step: 'loginname' });
          return htmlResponse(status, loginNamePage(page, { loginName: auth.loginName ?? '', error: t(flow, 'register.notAllowed'), allowRegister: false }));
        }
        return htmlResponse(status, registerPage(page, {}, error));
      case 'loginname':
        return htmlResponse(
          status,
          loginNamePage(page, { loginName: auth.loginName ?? '', ...(error ? { error } : {}), allowRegister: allowRegister(flow) }),
        );
    }
  }

  /** Signs the user in on this browser and answers the client. */
  async function finish(flow: Flow, user: UserRecord, amr: string[]): Promise<Response> {
    const session = await ctx.userSessions.signIn(flow.agent.agentId, user.id, amr);
    return answer(flow, session);
  }

  async function answer(flow: Flow, session: UserSession): Promise<Response> {
    ctx.authRequests.finish(flow.auth.id);
    return completeAuthorization(ctx, flow.auth.request, session, flow.page.locale);
  }

  /** Who may sign in with a password for this request: an active human with a password, in the requested org. */
  function eligible(flow: Flow, user: UserRecord | undefined): user is UserRecord {
    if (!user?.human?.passwordHash) return false;
    if (flow.auth.request.orgId !== undefined && user.orgId !== flow.auth.request.orgId) return false;
    return ctx.orgs.getOrg(user.orgId)?.state === 'ORG_STATE_ACTIVE';
  }

  async function checkPassword(flow: Flow, password: string | undefined): Promise<Response> {
    const candidate = flow.auth.userId ? ctx.orgs.getUser(flow.auth.userId) : undefined;
    const pw = password ?? '';
    if (!eligible(flow, candidate) || pw.length > MAX_PASSWORD) {
      // Same work and same answer as a wrong password: the page does not tell who exists.
      dummyHash ??= ctx.pool.hashPassword('sesame-dummy-password');
      await ctx.pool.verifyPassword(pw.slice(0, MAX_PASSWORD), await dummyHash);
      return render(flow, t(flow, 'password.invalid'));
    }
    return passwordChecks.run(candidate.id, async () => {
      // Re-read: an earlier check of this user may have just locked it.
      const user = ctx.orgs.getUser(candidate.id)!;
      if (user.state === 'USER_STATE_LOCKED') return render(flow, t(flow, 'password.locked'));
      if (!ctx.orgs.policy('login', user.orgId).policy.allowUsernamePassword) return render(flow, t(flow, 'password.notAllowed'));
      const human = user.human!;
      const result = await ctx.pool.verifyPassword(pw, human.passwordHash!);
      // The request may have switched to another login name while the hash was checked.
      if (flow.auth.userId !== user.id) return expired(flow.agent);
      if (!result.ok) {
        if (user.state !== 'USER_STATE_ACTIVE') return render(flow, t(flow, 'password.invalid'));
        const { locked } = await ctx.orgs.recordPasswordFailure(user.id);
        return render(flow, t(flow, locked ? 'password.locked' : 'password.invalid'));
      }
      if (user.state !== 'USER_STATE_ACTIVE') return render(flow, t(flow, 'password.invalid'));
      await ctx.orgs.recordPasswordSuccess(user.id, result.needsRehash ? await ctx.pool.hashPassword(pw) : undefined);
      if (human.otpSecretSealed) {
        ctx.authRequests.update(flow.auth, { step: 'otp', amr: ['pwd'], authenticatedUserId: user.id, otpFailures: 0 });
        return backToStep(flow);
      }
      return finish(flow, user, ['pwd']);
    });
  }

  async function checkOtp(flow: Flow, code: string | undefined): Promise<Response> {
    const user = flow.auth.userId ? ctx.orgs.getUser(flow.auth.userId) : undefined;
    // The password must have been passed by this very user in this request.
    if (!flow.auth.amr.includes('pwd') || !user || flow.auth.authenticatedUserId !== user.id) return expired(flow.agent);
    if (!user.human?.otpSecretSealed || !ctx.orgs.isActive(user)) return expired(flow.agent);
    if (otpLimiter.blocked(user.id)) return render(flow, t(flow, 'password.locked'));
    const secret = ctx.masterKey.decrypt(user.human.otpSecretSealed).toString('utf8');
    const step = verifyTotp(secret, (code ?? '').replace(/\s+/g, ''));
    if (step === undefined || step <= (lastOtpStep.get(user.id) ?? -1)) {
      otpLimiter.fail(user.id);
      const failures = (flow.auth.otpFailures ?? 0) + 1;
      // Five wrong codes end this login request; the user starts again from the application.
      if (failures >= MAX_OTP_FAILURES_PER_REQUEST) {
        ctx.authRequests.finish(flow.auth.id);
        return expired(flow.agent);
      }
      ctx.authRequests.update(flow.auth, { otpFailures: failures });
      return render(flow, t(flow, 'otp.invalid'));
    }
    otpLimiter.reset(user.id);
    lastOtpStep.set(user.id, step);
    return finish(flow, user, ['pwd', 'otp', 'mfa']);
  }

  async function register(flow: Flow, form: Form): Promise<Response> {
    if (!allowRegister(flow)) return render(flow);
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
    if (password.length < 8 || password.length > MAX_PASSWORD) return fail('register.password.short');
    if (password !== form.get('passwordConfirm')) return fail('register.password.mismatch');
    let user: UserRecord;
    try {
      const passwordHash = await ctx.pool.hashPassword(password);
      user = await ctx.orgs.addUser(registrationOrgId(flow), {
        userName: values.userName!,
        human: {
          profile: { firstName: values.firstName!, lastName: values.lastName!, nickName: '', displayName: `${values.firstName} ${values.lastName}`, preferredLanguage: flow.page.locale, gender: 'GENDER_UNSPECIFIED' },
          email: { email: values.email!, isEmailVerified: false },
          passwordHash,
          passwordChangeRequired: false,
          failedPasswordAttempts: 0,
        },
      });
    } catch (error) {
      if (error instanceof ApiError && (error.kind === 'AlreadyExists' || error.kind === 'InvalidArgument')) return fail('register.taken');
      throw error;
    }
    ctx.authRequests.update(flow.auth, { userId: user.id });
    return finish(flow, user, ['pwd']);
  }

  /** Wraps a POST handler: form parsing, auth request and CSRF checks. */
  const post = (handler: (flow: Flow, form: Form) => Response | Promise<Response>) => async (req: Request) => {
    const form = parseFormBody(req.headers['content-type'], req.body);
    const flow = flowOf(req, form);
    if (!('auth' in flow)) return flow;
    return handler(flow, form);
  };

  const get = (handler: (flow: Flow, req: Request) => Response | Promise<Response>) => (req: Request) => {
    const flow = flowOf(req, undefined);
    if (!('auth' in flow)) return flow;
    return handler(flow, req);
  };

  const route = (pattern: string, methods: Route['methods']): Route => ({ pattern, errorStyle: 'html', methods });

  return [
    route(LOGIN_PATH, {
      GET: get((flow, req) => {
        if (parseUrlEncoded(req.query).get('step') === 'loginname') {
          ctx.authRequests.update(flow.auth, { step: 'loginname', amr: [] });
          delete flow.auth.userId;
        }
        return render(flow);
      }),
    }),
    route('/ui/login/loginname', {
      POST: post((flow, form) => {
        const loginName = (form.get('loginName') ?? '').trim().slice(0, 300);
        if (!loginName) return render(flow, t(flow, 'password.invalid'));
        // Whether the user exists is not revealed here: the password step answers the same for both.
        const user = ctx.orgs.findUserByLoginName(loginName);
        const change: Partial<AuthRequest> = { step: 'password', loginName, amr: [] };
        ctx.authRequests.update(flow.auth, change);
        flow.auth.userId = user?.id;
        return backToStep(flow);
      }),
    }),
    route('/ui/login/loginname/change', {
      POST: post((flow) => {
        ctx.authRequests.update(flow.auth, { step: 'loginname', amr: [] });
        delete flow.auth.userId;
        return backToStep(flow);
      }),
    }),
    route('/ui/login/password', {
      POST: post((flow, form) => (flow.auth.step === 'password' ? checkPassword(flow, form.get('password')) : backToStep(flow))),
    }),
    route('/ui/login/otp', {
      POST: post((flow, form) => (flow.auth.step === 'otp' ? checkOtp(flow, form.get('code')) : backToStep(flow))),
    }),
    route('/ui/login/select', {
      POST: post((flow, form) => {
        const sid = form.get('sid');
        const session = usableSessions(ctx, flow.agent.agentId, flow.auth.request).find((s) => s.id === sid);
        if (!session) {
          ctx.authRequests.update(flow.auth, { step: 'loginname', amr: [] });
          delete flow.auth.userId;
          return backToStep(flow);
        }
        const request = flow.auth.request;
        if (!request.prompt.has('login') && isFresh(session, request.maxAge)) return answer(flow, session);
        ctx.authRequests.update(flow.auth, { step: 'password', userId: session.userId, amr: [] });
        return backToStep(flow);
      }),
    }),
    route('/ui/login/register', {
      GET: get((flow) => {
        ctx.authRequests.update(flow.auth, { step: 'register' });
        return render(flow);
      }),
      POST: post((flow, form) => register(flow, form)),
    }),
    route('/ui/login/logout/done', {
      GET: (req) => htmlResponse(200, signedOutPage(agentOf(ctx, req, parseUrlEncoded(req.query).get('ui_locales')).locale)),
    }),
    route(STYLESHEET_PATH, {
      GET: () => ({ status: 200, headers: { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600' }, body: STYLESHEET }),
    }),
  ];
}
