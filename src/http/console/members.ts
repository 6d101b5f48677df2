import { INSTANCE_ROLES, ORG_ROLES } from '../../domain/permissions.js';
import type { MemberView, UserView } from '../../ui/console/api-shapes.js';
import { membersPage } from '../../ui/console/members.js';
import type { ConsoleTextKey } from '../../ui/console/texts.js';
import type { Response, Route } from '../types.js';
import type { ApiProblem } from './api.js';
import { acting, consoleRoute, doneNotice, seeOther, type ConsoleCall, type ConsoleKit } from './page.js';

/** A scope whose members the console shows: the org worked in, or the instance. */
interface MemberScope {
  /** The console's pages of the scope. */
  page: string;
  /** The API's members of the scope (AddOrgMember … RemoveOrgMember, or the admin API's IAM members). */
  api: string;
  roles: readonly string[];
  nav: 'members' | 'instanceMembers';
  title: ConsoleTextKey;
}

const SCOPES: readonly MemberScope[] = [
  { page: '/ui/console/members', api: '/management/v1/orgs/me/members', roles: ORG_ROLES, nav: 'members', title: 'members.title' },
  { page: '/ui/console/instance/members', api: '/admin/v1/members', roles: INSTANCE_ROLES, nav: 'instanceMembers', title: 'members.instanceTitle' },
];

/**
 * The console's members: who holds roles in the current org or in the instance (ListOrgMembers,
 * ListIAMMembers), made members with roles, their roles changed, removed. The API decides who may:
 * the scope's member permission, and the instance's last IAM_OWNER keeps the role.
 */
export function memberConsoleRoutes(kit: ConsoleKit): Route[] {
  return SCOPES.flatMap((scope) => {
    const pageOf = async (call: ConsoleCall, problem?: ApiProblem): Promise<Response> => {
      const [members, users] = await Promise.all([
        call.api.call<{ result?: MemberView[] }>('POST', `${scope.api}/_search`, [], {}),
        call.api.call<{ result?: UserView[] }>('POST', '/management/v1/users/_search', [], { query: { limit: 1000, asc: true }, sortingColumn: 'USER_FIELD_NAME_USER_NAME' }),
      ]);
      const body = membersPage(call.t, call.csrf, { base: scope.page, members: members.result ?? [], roles: scope.roles, candidates: users.result ?? [] });
      const notice = problem ? { kind: 'error' as const, text: problem.message } : doneNotice(call.req, call.t);
      return call.page(scope.nav, call.t(scope.title), body, notice, problem?.status);
    };
    const change = (call: ConsoleCall, work: () => Promise<unknown>) =>
      acting(
        async () => {
          await work();
          return seeOther(scope.page);
        },
        (problem) => pageOf(call, problem),
      );
    return [
      consoleRoute(kit, scope.page, {
        GET: (call) => pageOf(call),
        POST: (call) => change(call, () => call.api.call('POST', scope.api, [], { userId: call.form.get('userId') ?? '', roles: call.form.all('roles') })),
      }),
      consoleRoute(kit, `${scope.page}/:userId`, {
        POST: (call) => change(call, () => call.api.call('PUT', `${scope.api}/:userId`, [call.req.params[0]!], { roles: call.form.all('roles') })),
      }),
      consoleRoute(kit, `${scope.page}/:userId/remove`, {
        POST: (call) => change(call, () => call.api.call('DELETE', `${scope.api}/:userId`, [call.req.params[0]!])),
      }),
    ];
  });
}
