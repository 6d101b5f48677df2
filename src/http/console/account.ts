import type { UserView } from '../../ui/console/api-shapes.js';
import { accountPage, type OtpSetup, type SessionView, type U2fSetup } from '../../ui/console/account.js';
import { CONSOLE_CEREMONY_CSP } from '../html.js';
import { parseCeremonyAnswer } from '../../services/webauthn.js';
import { qrCodeDataUrl } from '../../ui/qr-code.js';
import type { Response, Route } from '../types.js';
import { ApiProblem } from './api.js';
import type { Notice } from '../../ui/console/layout.js';
import { SIGN_IN_AGAIN } from '../../domain/recent-sign-in.js';
import { acting, consoleRoute, doneNotice, seeOther, type ConsoleCall, type ConsoleKit } from './page.js';
import { factorRoutes, factorsOf, MY_FACTORS } from './factors.js';

/**
 * The signed-in person's page (`/ui/console/me`), through the auth API as themselves: a new
 * password (the old one checked; every session ends, this one too), their browser sessions, an
 * authenticator app (TOTP): its key shown in the answer to the POST that made it, confirmed with a
 * code; their email address (verified with the mailed code) and phone number. Those take a sign-in
 * of the last minutes: the API's refusal comes with a link that signs in again (`prompt=login`) and
 * comes back here.
 */
async function page(call: ConsoleCall, problem?: ApiProblem, otpSetup?: OtpSetup, u2fSetup?: U2fSetup): Promise<Response> {
  const [me, sessions, factors] = await Promise.all([
    call.api.call<{ user: UserView }>('GET', '/auth/v1/users/me'),
    call.api.call<{ result?: SessionView[] }>('POST', '/auth/v1/users/me/sessions/_search', [], {}),
    factorsOf(call, MY_FACTORS),
  ]);
  const body = accountPage(call.t, call.csrf, me.user, sessions.result ?? [], call.session.loginSession || undefined, factors, otpSetup, u2fSetup);
  const sent = new URLSearchParams(call.req.query).has('sent');
  const notice = problem
    ? problemNotice(call, problem, me.user.preferredLoginName ?? me.user.userName)
    : sent
      ? { kind: 'info' as const, text: call.t('factors.passkeyLinkSent') }
      : doneNotice(call.req, call.t);
  return call.page('account', call.t('account.title'), body, notice, problem?.status);
}

/** A refusal on the page; one for want of a recent sign-in links to a new one as the same person (`loginHint`), back to this page. */
function problemNotice(call: ConsoleCall, problem: ApiProblem, loginName: string): Notice {
  if (problem.id !== SIGN_IN_AGAIN) return { kind: 'error', text: problem.message };
  const href = `/ui/console/login?${new URLSearchParams({ returnTo: '/ui/console/me', again: '1', loginHint: loginName })}`;
  return { kind: 'error', text: problem.message, action: { href, text: call.t('account.signInAgain') } };
}

/** A form posted to the auth API as the person, back to their page. */
function meAction(kit: ConsoleKit, path: string, send: (call: ConsoleCall) => Promise<unknown>): Route {
  return consoleRoute(kit, path, {
    POST: (call) =>
      acting(
        async () => {
          await send(call);
          return seeOther('/ui/console/me');
        },
        (problem) => page(call, problem),
      ),
  });
}

export function accountConsoleRoutes(kit: ConsoleKit): Route[] {
  return [
    meAction(kit, '/ui/console/me/email', (call) => call.api.call('PUT', '/auth/v1/users/me/email', [], { email: (call.form.get('email') ?? '').trim() })),
    meAction(kit, '/ui/console/me/email/verify', (call) => call.api.call('POST', '/auth/v1/users/me/email/_verify', [], { code: call.form.get('code') ?? '' })),
    meAction(kit, '/ui/console/me/email/resend', (call) => call.api.call('POST', '/auth/v1/users/me/email/_resend_verification', [], {})),
    meAction(kit, '/ui/console/me/phone', (call) => call.api.call('PUT', '/auth/v1/users/me/phone', [], { phone: (call.form.get('phone') ?? '').trim() })),
    meAction(kit, '/ui/console/me/phone/remove', (call) => call.api.call('DELETE', '/auth/v1/users/me/phone')),
    consoleRoute(kit, '/ui/console/me', { GET: (call) => page(call) }),
    // The session ends with the others: the page after it asks for the new password.
    meAction(kit, '/ui/console/me/password', (call) =>
      call.api.call('PUT', '/auth/v1/users/me/password', [], { oldPassword: call.form.get('oldPassword') ?? '', newPassword: call.form.get('newPassword') ?? '' }),
    ),
    ...factorRoutes(kit, MY_FACTORS, page),
    consoleRoute(kit, '/ui/console/me/otp', {
      POST: (call) =>
        acting(
          async () => {
            const { url, secret } = await call.api.call<{ url: string; secret: string }>('POST', '/auth/v1/users/me/auth_factors/otp', [], {});
            return page(call, undefined, { qrCode: await qrCodeDataUrl(url), secret, url });
          },
          (problem) => page(call, problem),
        ),
    }),
    consoleRoute(kit, '/ui/console/me/u2f', {
      POST: (call) =>
        acting(
          async () => {
            const { key } = await call.api.call<{ key: { publicKey: string } }>('POST', '/auth/v1/users/me/auth_factors/u2f', [], {});
            const answer = await page(call, undefined, undefined, { options: JSON.parse(Buffer.from(key.publicKey, 'base64').toString('utf8')) as unknown });
            // This answer only runs the ceremony's one script (by its hash); every other console page runs none.
            return { ...answer, headers: { ...answer.headers, 'Content-Security-Policy': CONSOLE_CEREMONY_CSP } };
          },
          (problem) => page(call, problem),
        ),
    }),
    consoleRoute(kit, '/ui/console/me/u2f/verify', {
      POST: (call) =>
        acting(
          async () => {
            const credential = parseCeremonyAnswer(call.form.get('credential'));
            // The browser or the key gave up (or scripts are off): nothing to verify; a new try starts again.
            if (!credential || call.form.get('failure')) return page(call, new ApiProblem(400, call.t('account.u2fFailed')));
            await call.api.call('POST', '/auth/v1/users/me/auth_factors/u2f/_verify', [], {
              verification: { publicKeyCredential: credential, tokenName: (call.form.get('name') ?? '').slice(0, 100) },
            });
            return seeOther('/ui/console/me');
          },
          (problem) => page(call, problem),
        ),
    }),
    consoleRoute(kit, '/ui/console/me/otp/verify', {
      POST: (call) =>
        acting(
          async () => {
            await call.api.call('POST', '/auth/v1/users/me/auth_factors/otp/_verify', [], { code: call.form.get('code') ?? '' });
            return seeOther('/ui/console/me');
          },
          // A mistyped code keeps the setup on the page (the key the person's app holds stays the one waiting).
          async (problem) => {
            const url = (call.form.get('url') ?? '').slice(0, 1000);
            const secret = (call.form.get('secret') ?? '').slice(0, 200);
            return page(call, problem, url.startsWith('otpauth://') && secret ? { qrCode: await qrCodeDataUrl(url), secret, url } : undefined);
          },
        ),
    }),
    meAction(kit, '/ui/console/me/sessions/:sessionId/end', (call) => call.api.call('DELETE', '/v2/sessions/:sessionId', [call.req.params[0]!])),
  ];
}
