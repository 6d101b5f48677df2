import type { OrgsActor } from '../actors/orgs.js';
import type { AppRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

/**
 * Whether a client may be used at all: one rule for every endpoint that authenticates a client,
 * starts an authorization or issues a token. ZITADEL disables an app with its project or its org.
 * (Whether a person may sign in is OrgsActor.isActive: active, in an active org.)
 */
export type UsableDirectory = Pick<OrgsActor, 'getProject' | 'orgIsActive'>;

/** Why an application may not be used (for the log; clients see a generic answer), or undefined. */
export function appUnusableReason(app: View<AppRecord>, directory: UsableDirectory): string | undefined {
  if (app.state !== 'APP_STATE_ACTIVE') return 'application is not active';
  const project = directory.getProject(app.projectId);
  if (!project) return "application's project does not exist";
  if (project.state !== 'PROJECT_STATE_ACTIVE') return "application's project is not active";
  if (!directory.orgIsActive(app.orgId)) return "application's organization is not active";
  return undefined;
}

export function appIsUsable(app: View<AppRecord> | undefined, directory: UsableDirectory): app is View<AppRecord> {
  return app !== undefined && appUnusableReason(app, directory) === undefined;
}
