import { requireUserAccess } from './users.js';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { ActivityEvent, EventQuery } from '../../model/activity.js';
import { SYSTEM_USER } from '../../model/activity.js';
import { changeView, eventQueryOf, eventView, listChangesSchema, listEventsSchema, type EditorView } from '../../zitadel/events.js';
import { readBody } from '../../zitadel/validation.js';
import { apiRoute, ok, type EndpointPorts } from './endpoint.js';
import { requireProjectAccess, type ProjectsPorts } from './projects.js';
import { requireAppAccess, type AppsPorts } from './apps.js';
import type { Request } from '../types.js';

/** What this module uses of the wired parts (src/app.ts). */
export type EventsPorts = Pick<Ports, 'activity' | 'orgs'> & EndpointPorts & ProjectsPorts & AppsPorts;

/**
 * The activity log over ZITADEL's event API: ListEvents for whoever may read the instance's events
 * (`events.read`: IAM_OWNER, IAM_OWNER_VIEWER), and the changes of one user, the caller's org, a
 * project or an app for whoever may read that object.
 */
export function eventRoutes(ctx: EventsPorts): Route[] {
  /** Who each editor is, looked up once per answer. */
  const editors = (events: readonly ActivityEvent[]) => {
    const found = new Map<string, EditorView | undefined>();
    for (const { editor } of events) {
      if (found.has(editor)) continue;
      const user = ctx.orgs.getUser(editor);
      const name = editor === SYSTEM_USER ? 'System' : user ? user.human?.profile.displayName || user.machine?.name || user.userName : '';
      found.set(editor, { displayName: name, preferredLoginName: user ? ctx.orgs.preferredLoginName(user) : '' });
    }
    return found;
  };
  const changes = async (req: Request, narrow: Omit<EventQuery, 'limit' | 'asc' | 'from'>) => {
    const { query } = readBody(req, listChangesSchema);
    const events = await ctx.activity.search({ ...narrow, limit: query.limit, asc: query.asc, ...(query.sequence > 0 ? { from: query.sequence } : {}) });
    const who = editors(events);
    return ok({ result: events.map((event) => changeView(event, who.get(event.editor))) });
  };
  return [
    apiRoute(ctx, '/admin/v1/events/_search', {
      POST: async (req, caller) => {
        caller.require('events.read', {});
        const events = await ctx.activity.search(eventQueryOf(readBody(req, listEventsSchema)));
        const who = editors(events);
        return ok({ events: events.map((event) => eventView(event, who.get(event.editor))) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/:userId/changes/_search', {
      POST: (req, caller) => {
        const user = requireUserAccess(ctx, caller, req.params[0]!, 'user.read');
        return changes(req, { aggregateId: user.id, aggregateTypes: ['user'] });
      },
    }),
    apiRoute(ctx, '/management/v1/orgs/me/changes/_search', {
      POST: (req, caller) => {
        caller.require('org.read');
        ctx.orgs.requireOrg(caller.orgId);
        return changes(req, { aggregateId: caller.orgId, aggregateTypes: ['org'] });
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/changes/_search', {
      POST: (req, caller) => {
        const project = requireProjectAccess(ctx, caller, req.params[0]!, 'project.read');
        return changes(req, { aggregateId: project.id, aggregateTypes: ['project'] });
      },
    }),
    apiRoute(ctx, '/management/v1/projects/:projectId/apps/:appId/changes/_search', {
      POST: (req, caller) => {
        const app = requireAppAccess(ctx, caller, req, 'project.app.read');
        return changes(req, { aggregateId: app.projectId, aggregateTypes: ['project'], objectId: app.id });
      },
    }),
  ];
}
