import type { UserView } from '../../ui/console/api-shapes.js';
import { accountPage, type OtpSetup, type SessionView } from '../../ui/console/account.js';
import { qrCodeDataUrl } from '../../ui/qr-code.js';
import type { Response, Route } from '../types.js';
import type { ApiProblem } from './api.js';
import { acting, consoleRoute, doneNotice, seeOther, type ConsoleCall, type ConsoleKit } from './page.js';
import { factorRoutes, factorsOf, MY_FACTORS } from './factors.js';

/**
 * The signed-in person's page (`/ui/console/me`), through the auth API as themselves: a new
 * password (the old one checked; every session ends, this one too), their browser sessions, and an
 * authenticator app (TOTP): its key shown in the answer to the POST that made it, confirmed with a code.
 */
async function page(call: ConsoleCall, problem?: ApiProblem, otpSetup?: OtpSetup): Promise<Response> {
  const [me, sessions, factors] = await Promise.all([
    call.api.call<{ user: UserView }>('GET', '/auth/v1/users/me'),
    call.api.call<{ result?: SessionView[] }>('POST', '/auth/v1/users/me/sessions/_search', [], {}),
    factorsOf(call, MY_FACTORS),
  ]);
  const body = accountPage(call.t, call.csrf, me.user, sessions.result ?? [], call.session.loginSession || undefined, factors, otpSetup);
  const sent = new URLSearchParams(call.req.query).has('sent');
  const notice = problem ? { kind: 'error' as const, text: problem.message } : sent ? { kind: 'info' as const, text: call.t('factors.passkeyLinkSent') } : doneNotice(call.req, call.t);
  return call.page('account', call.t('account.title'), body, notice, problem?.status);
}

export function accountConsoleRoutes(kit: ConsoleKit): Route[] {
  return [
    consoleRoute(kit, '/ui/console/me', { GET: (call) => page(call) }),
    consoleRoute(kit, '/ui/console/me/password', {
      POST: (call) =>
        acting(
          async () => {
            await call.api.call('PUT', '/auth/v1/users/me/password', [], { oldPassword: call.form.get('oldPassword') ?? '', newPassword: call.form.get('newPassword') ?? '' });
            // This session ended with the others: the next page asks for the new password.
            return seeOther('/ui/console/me');
          },
          (problem) => page(call, problem),
        ),
    }),
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
    consoleRoute(kit, '/ui/console/me/sessions/:sessionId/end', {
      POST: (call) =>
        acting(
          async () => {
            await call.api.call('DELETE', '/v2/sessions/:sessionId', [call.req.params[0]!]);
            return seeOther('/ui/console/me');
          },
          (problem) => page(call, problem),
        ),
    }),
  ];
}
