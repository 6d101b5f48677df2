import type { ChangeView, GrantView, KeyView, MetadataView, PatView, ProjectView, UserSessionView, UserView } from '../../ui/console/api-shapes.js';
import { displayName, userPage, usersPage } from '../../ui/console/users.js';
import type { Response, Route } from '../types.js';
import type { ApiProblem } from './api.js';
import { acting, consoleRoute, doneNotice, seeOther, type ConsoleCall, type ConsoleKit } from './page.js';
import { factorRoutes, factorsOf, USER_FACTORS } from './factors.js';

/**
 * The console's users: ListUsers with a search, AddHumanUser and AddMachineUser, and one user's
 * page with the lifecycle actions (lock, unlock, deactivate, reactivate, remove), a password, and
 * a machine user's tokens, secret and key files (shown once, in the answer to the POST that made
 * them), and metadata.
 */
const USER = '/management/v1/users/:userId';

/** Users a page of the list shows. */
const PAGE_SIZE = 100;

async function listPage(call: ConsoleCall, problem?: ApiProblem, open?: 'human' | 'machine'): Promise<Response> {
  const params = new URLSearchParams(call.req.query);
  const filter = (params.get('q') ?? '').slice(0, 200);
  const asked = Number.parseInt(params.get('page') ?? '1', 10);
  const queries = filter ? [{ loginNameQuery: { loginName: filter, method: 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE' } }] : [];
  const list = (page: number) =>
    call.api.call<{ result?: UserView[]; details?: { totalResult?: string } }>('POST', '/management/v1/users/_search', [], {
      query: { offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE, asc: true },
      sortingColumn: 'USER_FIELD_NAME_USER_NAME',
      queries,
    });
  let page = Number.isSafeInteger(asked) && asked >= 1 ? asked : 1;
  let answer = await list(page);
  const total = Number(answer.details?.totalResult ?? 0);
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  // A page past the end (the list shrank, or a hand-made link) shows the last one.
  if (page > pages) answer = await list((page = pages));
  const notice = problem ? { kind: 'error' as const, text: problem.message } : doneNotice(call.req, call.t);
  return call.page('users', call.t('users.title'), usersPage(call.t, call.csrf, { users: answer.result ?? [], filter, page, pages, total }, open), notice, problem ? problem.status : 200);
}

async function userPageOf(call: ConsoleCall, userId: string, extra: { once?: { label: string; value: string }; problem?: ApiProblem } = {}): Promise<Response> {
  const { user } = await call.api.call<{ user: UserView }>('GET', USER, [userId]);
  const [pats, keys, metadata, changes, factors, grants, projects, sessions] = await Promise.all([
    user.machine ? call.api.call<{ result?: PatView[] }>('POST', `${USER}/pats/_search`, [userId], {}) : Promise.resolve({ result: [] as PatView[] }),
    user.machine ? call.api.call<{ result?: KeyView[] }>('POST', `${USER}/keys/_search`, [userId], { query: { limit: 1000, asc: true } }) : Promise.resolve({ result: [] as KeyView[] }),
    call.api.call<{ result?: MetadataView[] }>('POST', `${USER}/metadata/_search`, [userId], { query: { limit: 1000, asc: true } }),
    call.api.call<{ result?: ChangeView[] }>('POST', `${USER}/changes/_search`, [userId], { query: { limit: 20 } }),
    user.human ? factorsOf(call, USER_FACTORS) : Promise.resolve(undefined),
    call.api.call<{ result?: GrantView[] }>('POST', '/management/v1/users/grants/_search', [], { query: { limit: 1000, asc: true }, queries: [{ userIdQuery: { userId } }] }),
    call.api.call<{ result?: ProjectView[] }>('POST', '/management/v1/projects/_search', [], { query: { limit: 1000, asc: true } }),
    user.human
      ? call.api.call<{ sessions?: UserSessionView[] }>('POST', '/v2/sessions/search', [], { query: { limit: 1000, asc: true }, queries: [{ userIdQuery: { id: userId } }] })
      : Promise.resolve({ sessions: [] as UserSessionView[] }),
  ]);
  const notice = extra.problem ? { kind: 'error' as const, text: extra.problem.message } : extra.once ? undefined : doneNotice(call.req, call.t);
  const body = userPage(call.t, call.csrf, {
    user,
    pats: pats.result ?? [],
    keys: keys.result ?? [],
    metadata: metadata.result ?? [],
    sessions: sessions.sessions ?? [],
    changes: changes.result ?? [],
    grants: grants.result ?? [],
    projects: projects.result ?? [],
    ...(factors ? { factors } : {}),
    ...(extra.once ? { once: extra.once } : {}),
  });
  return call.page('users', displayName(user), body, notice, extra.problem ? extra.problem.status : 200);
}

const checked = (call: ConsoleCall, name: string) => call.form.get(name) === 'true';

export function userConsoleRoutes(kit: ConsoleKit): Route[] {
  /** A POST on one user's page whose answer `work` makes (a page handing out a secret once), or the page with the API's refusal. */
  const userAnswer = (path: string, work: (call: ConsoleCall, userId: string) => Promise<Response>) =>
    consoleRoute(kit, path, {
      POST: (call) => {
        const userId = call.req.params[0]!;
        return acting(
          () => work(call, userId),
          (problem) => userPageOf(call, userId, { problem }),
        );
      },
    });
  /** A POST on one user's page: `work` calls the API, then the page again. */
  const userAction = (path: string, work: (call: ConsoleCall, userId: string) => Promise<unknown>) =>
    userAnswer(path, async (call, userId) => {
      await work(call, userId);
      return seeOther(`/ui/console/users/${encodeURIComponent(userId)}`);
    });
  const lifecycle = (action: string) =>
    userAction(`/ui/console/users/:userId/${action}`, async (call, userId) => {
      await call.api.call('POST', `${USER}/_${action}`, [userId], {});
    });
  return [
    consoleRoute(kit, '/ui/console/users', { GET: (call) => listPage(call) }),
    consoleRoute(kit, '/ui/console/users/human', {
      POST: (call) =>
        acting(
          async () => {
            const f = call.form;
            const password = f.get('password') ?? '';
            const created = await call.api.call<{ userId: string }>('POST', '/management/v1/users/human', [], {
              userName: f.get('userName') ?? '',
              profile: { firstName: f.get('firstName') ?? '', lastName: f.get('lastName') ?? '' },
              email: { email: f.get('email') ?? '', isEmailVerified: checked(call, 'emailVerified') },
              ...(password ? { initialPassword: password } : {}),
            });
            // AddHumanUser sets no "change required" flag: a password the admin chose is set again with it when asked.
            if (password && checked(call, 'changeRequired')) await call.api.call('POST', `${USER}/password`, [created.userId], { password, noChangeRequired: false });
            return seeOther(`/ui/console/users/${encodeURIComponent(created.userId)}`);
          },
          (problem) => listPage(call, problem, 'human'),
        ),
    }),
    consoleRoute(kit, '/ui/console/users/machine', {
      POST: (call) =>
        acting(
          async () => {
            const f = call.form;
            const created = await call.api.call<{ userId: string }>('POST', '/management/v1/users/machine', [], {
              userName: f.get('userName') ?? '',
              name: f.get('name') ?? '',
              description: f.get('description') ?? '',
            });
            return seeOther(`/ui/console/users/${encodeURIComponent(created.userId)}`);
          },
          (problem) => listPage(call, problem, 'machine'),
        ),
    }),
    consoleRoute(kit, '/ui/console/users/:userId', { GET: (call) => userPageOf(call, call.req.params[0]!) }),
    ...factorRoutes(kit, USER_FACTORS, (call, problem) => userPageOf(call, call.req.params[0]!, problem ? { problem } : {})),
    userAction('/ui/console/users/:userId/grants', async (call, userId) => {
      const roleKeys = (call.form.get('roleKeys') ?? '')
        .split(',')
        .map((key) => key.trim())
        .filter((key) => key !== '');
      await call.api.call('POST', `${USER}/grants`, [userId], { projectId: call.form.get('projectId') ?? '', roleKeys });
    }),
    userAction('/ui/console/users/:userId/grants/:grantId/remove', async (call, userId) => {
      await call.api.call('DELETE', `${USER}/grants/:grantId`, [userId, call.req.params[1]!]);
    }),
    lifecycle('lock'),
    lifecycle('unlock'),
    lifecycle('deactivate'),
    lifecycle('reactivate'),
    consoleRoute(kit, '/ui/console/users/:userId/remove', {
      POST: (call) =>
        acting(
          async () => {
            await call.api.call('DELETE', USER, [call.req.params[0]!]);
            return seeOther('/ui/console/users');
          },
          (problem) => userPageOf(call, call.req.params[0]!, { problem }),
        ),
    }),
    userAction('/ui/console/users/:userId/email', async (call, userId) => {
      await call.api.call('PUT', `${USER}/email`, [userId], { email: call.form.get('email') ?? '', isEmailVerified: checked(call, 'emailVerified') });
    }),
    userAction('/ui/console/users/:userId/phone', async (call, userId) => {
      await call.api.call('PUT', `${USER}/phone`, [userId], { phone: call.form.get('phone') ?? '', isPhoneVerified: checked(call, 'phoneVerified') });
    }),
    userAction('/ui/console/users/:userId/phone/remove', async (call, userId) => {
      await call.api.call('DELETE', `${USER}/phone`, [userId]);
    }),
    // The session id comes in the form (see removeControl); ending it revokes its tokens.
    userAction('/ui/console/users/:userId/sessions/end', (call) => call.api.call('DELETE', '/v2/sessions/:sessionId', [call.form.get('sessionId') ?? ''])),
    userAction('/ui/console/users/:userId/password', async (call, userId) => {
      await call.api.call('POST', `${USER}/password`, [userId], { password: call.form.get('password') ?? '', noChangeRequired: !checked(call, 'changeRequired') });
    }),
    // A token or secret is shown in the answer to the POST that made it, and nowhere else.
    userAnswer('/ui/console/users/:userId/pats', async (call, userId) => {
      const { token } = await call.api.call<{ token: string }>('POST', `${USER}/pats`, [userId], {});
      return userPageOf(call, userId, { once: { label: call.t('users.pat'), value: token } });
    }),
    userAction('/ui/console/users/:userId/pats/:tokenId/remove', async (call, userId) => {
      await call.api.call('DELETE', `${USER}/pats/:tokenId`, [userId, call.req.params[1]!]);
    }),
    userAnswer('/ui/console/users/:userId/keys', async (call, userId) => {
      const { keyDetails } = await call.api.call<{ keyDetails: string }>('POST', `${USER}/keys`, [userId], { type: 'KEY_TYPE_JSON' });
      const { user } = await call.api.call<{ user: UserView }>('GET', USER, [userId]);
      const file = Buffer.from(keyDetails, 'base64').toString('utf8');
      return userPageOf(call, userId, { once: { label: call.t('users.keyShown', { name: user.userName }), value: file } });
    }),
    // The key id and the metadata key come in the form, never in the path (see removeControl).
    userAction('/ui/console/users/:userId/keys/remove', async (call, userId) => {
      const keyId = call.form.get('keyId') ?? '';
      await call.api.call('DELETE', `${USER}/keys/:keyId`, [userId, keyId]);
    }),
    userAction('/ui/console/users/:userId/metadata', async (call, userId) => {
      const value = Buffer.from(call.form.get('value') ?? '', 'utf8').toString('base64');
      await call.api.call('POST', `${USER}/metadata/:key`, [userId, call.form.get('key') ?? ''], { value });
    }),
    userAction('/ui/console/users/:userId/metadata/remove', async (call, userId) => {
      const key = call.form.get('key') ?? '';
      await call.api.call('DELETE', `${USER}/metadata/:key`, [userId, key]);
    }),
    userAnswer('/ui/console/users/:userId/secret', async (call, userId) => {
      const { clientId, clientSecret } = await call.api.call<{ clientId: string; clientSecret: string }>('PUT', `${USER}/secret`, [userId], {});
      return userPageOf(call, userId, { once: { label: call.t('users.secretShown', { name: clientId }), value: clientSecret } });
    }),
  ];
}
