import type { EventView, MembershipView, OrgView } from '../../ui/console/api-shapes.js';
import { activityPage } from '../../ui/console/activity.js';
import { homePage, orgsPage } from '../../ui/console/home.js';
import { keysPage, type PublishedKey } from '../../ui/console/keys.js';
import { consoleCookies, sealedSession, setConsoleCookie } from './session.js';
import { redirectResponse } from '../html.js';
import type { Response, Route } from '../types.js';
import { ApiProblem } from './api.js';
import { acting, consoleRoute, doneNotice, seeOther, type ConsoleCall, type ConsoleKit } from './page.js';
import { PATHS } from '../../protocol/discovery.js';
import { metricsGlance } from '../../observability/recorder.js';

/** A read the person may not make (403) shows as nothing; any other failure is the page's. */
const refusedAs =
  <T>(value: T) =>
  (error: unknown): T => {
    if (error instanceof ApiProblem && error.status === 403) return value;
    throw error;
  };

const errorNotice = (problem: ApiProblem | undefined) => (problem ? { kind: 'error' as const, text: problem.message } : undefined);

async function orgsPageOf(call: ConsoleCall, problem?: ApiProblem): Promise<Response> {
  const [orgs, memberships] = await Promise.all([
    call.api.call<{ result?: OrgView[] }>('POST', '/auth/v1/global/projectorgs/_search', [], { query: { limit: 1000, asc: true }, sortingColumn: 'ORG_FIELD_NAME_NAME' }),
    call.api.call<{ result?: MembershipView[] }>('POST', '/auth/v1/memberships/me/_search', [], {}),
  ]);
  // Creating an org takes an instance role (AddOrg's `org.create` on the instance); the API decides, the form shows where it may.
  const canCreate = (memberships.result ?? []).some((m) => m.iam === true);
  return call.page('orgs', call.t('orgs.title'), orgsPage(call.t, call.csrf, orgs.result ?? [], call.session.orgId, canCreate), errorNotice(problem) ?? doneNotice(call.req, call.t), problem?.status);
}

/** ListEvents' answer (the instance's owners and viewers: `events.read`; others see the API's refusal). */
async function activityOf(call: ConsoleCall, filters: { type: string; editor: string; aggregate: string }, before: number | undefined): Promise<EventView[]> {
  const body = {
    limit: 50,
    asc: false,
    ...(before ? { sequence: before } : {}),
    ...(filters.type ? { eventTypes: [filters.type] } : {}),
    ...(filters.editor ? { editorUserId: filters.editor } : {}),
    ...(filters.aggregate ? { aggregateId: filters.aggregate } : {}),
  };
  return (await call.api.call<{ events?: EventView[] }>('POST', '/admin/v1/events/_search', [], body)).events ?? [];
}

/**
 * The console's overview, organizations (ListMyProjectOrgs, AddOrg, the org worked in), the
 * activity log (ListEvents for the instance's owners, the org's changes for everyone else) and the
 * signing keys (the JWKS, RotateKeys).
 */
export function overviewConsoleRoutes(kit: ConsoleKit, isReady: () => boolean): Route[] {
  const cookies = consoleCookies(kit.issuer);
  return [
    consoleRoute(kit, '/ui/console', {
      GET: async (call) => {
        const [users, projects, memberships, org] = await Promise.all([
          call.api.call<{ details?: { totalResult?: string } }>('POST', '/management/v1/users/_search', [], { query: { limit: 1 } }).catch(refusedAs(undefined)),
          call.api.call<{ details?: { totalResult?: string } }>('POST', '/management/v1/projects/_search', [], { query: { limit: 1 } }),
          call.api.call<{ result?: MembershipView[] }>('POST', '/auth/v1/memberships/me/_search', [], { query: { limit: 1000, asc: true } }),
          call.api.call<{ org?: OrgView }>('GET', '/management/v1/orgs/me').catch(refusedAs(undefined)),
        ]);
        const body = homePage(call.t, {
          orgName: org?.org?.name ?? call.session.orgId,
          users: users ? Number(users.details?.totalResult ?? 0) : undefined,
          projects: Number(projects.details?.totalResult ?? 0),
          ready: isReady(),
          memberships: memberships.result ?? [],
          // Instance-wide figures: for the instance's administrators only.
          ...((memberships.result ?? []).some((m) => m.iam === true) ? { metrics: metricsGlance() ?? null } : {}),
        });
        return call.page('home', call.t('home.title'), body, doneNotice(call.req, call.t));
      },
    }),
    consoleRoute(kit, '/ui/console/orgs', {
      GET: (call) => orgsPageOf(call),
      POST: (call) =>
        acting(
          async () => {
            await call.api.call('POST', '/management/v1/orgs', [], { name: call.form.get('name') ?? '' });
            return seeOther('/ui/console/orgs');
          },
          (problem) => orgsPageOf(call, problem),
        ),
    }),
    // The org worked in: one the person may read (the API says which), kept in the sealed session.
    consoleRoute(kit, '/ui/console/org', {
      POST: async (call) => {
        const orgId = (call.form.get('orgId') ?? '').slice(0, 200);
        const { result } = await call.api.call<{ result?: OrgView[] }>('POST', '/auth/v1/global/projectorgs/_search', [], { queries: [{ idQuery: { id: orgId } }] });
        if (!result?.length) return orgsPageOf(call, new ApiProblem(404, `organization ${orgId} not found`));
        const session = { ...call.session, orgId };
        return redirectResponse('/ui/console', { 'Set-Cookie': setConsoleCookie(cookies.session, sealedSession(kit.masterKey, session), session.until) }, 303);
      },
    }),
    consoleRoute(kit, '/ui/console/activity', {
      GET: async (call) => {
        const query = new URLSearchParams(call.req.query);
        const filters = {
          type: (query.get('type') ?? '').trim().slice(0, 200),
          editor: (query.get('editor') ?? '').trim().slice(0, 200),
          aggregate: (query.get('aggregate') ?? '').trim().slice(0, 200),
        };
        const before = Number(query.get('before') ?? '') || undefined;
        const events = await activityOf(call, filters, before);
        const older = events.length === 50 ? events[events.length - 1]?.sequence : undefined;
        return call.page('activity', call.t('activity.title'), activityPage(call.t, events, filters, older));
      },
    }),
    consoleRoute(kit, '/ui/console/keys', {
      GET: async (call) => {
        const answer = await kit.api.answer('GET', PATHS.jwks, [], {}, Buffer.alloc(0), call.req.peer);
        const keys = (JSON.parse(String(answer.body ?? '{}')) as { keys?: PublishedKey[] }).keys ?? [];
        return call.page('keys', call.t('keys.title'), keysPage(call.t, call.csrf, keys), doneNotice(call.req, call.t));
      },
    }),
    consoleRoute(kit, '/ui/console/keys/rotate', {
      POST: async (call) => {
        await call.api.call('POST', '/admin/v1/keys/_rotate', [], {});
        return seeOther('/ui/console/keys');
      },
    }),
  ];
}
