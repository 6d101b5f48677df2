import { describe, expect, it } from 'vitest';
import { appIsUsable, appUnusableReason, type UsableDirectory } from '../../src/domain/usable.js';
import type { AppRecord, ProjectRecord } from '../../src/model/records.js';

/** One rule for a usable client (src/domain/usable.ts): the app, its project and its org active. */
const app = (state: AppRecord['state'] = 'APP_STATE_ACTIVE') => ({ id: 'a', projectId: 'p', orgId: 'o', state }) as AppRecord;
const directory = (project: ProjectRecord['state'] | undefined, orgActive: boolean): UsableDirectory => ({
  getProject: (id: string) => (id === 'p' && project ? ({ id, state: project } as ProjectRecord) : undefined),
  orgIsActive: (id: string) => id === 'o' && orgActive,
});

describe('a usable client', () => {
  const cases: [string, AppRecord['state'], ProjectRecord['state'] | undefined, boolean, string | undefined][] = [
    ['all active', 'APP_STATE_ACTIVE', 'PROJECT_STATE_ACTIVE', true, undefined],
    ['app deactivated', 'APP_STATE_INACTIVE', 'PROJECT_STATE_ACTIVE', true, 'application is not active'],
    ['project missing', 'APP_STATE_ACTIVE', undefined, true, "application's project does not exist"],
    ['project deactivated', 'APP_STATE_ACTIVE', 'PROJECT_STATE_INACTIVE', true, "application's project is not active"],
    ['org deactivated', 'APP_STATE_ACTIVE', 'PROJECT_STATE_ACTIVE', false, "application's organization is not active"],
  ];
  it.each(cases)('%s', (_, appState, projectState, orgActive, reason) => {
    const d = directory(projectState, orgActive);
    expect(appUnusableReason(app(appState), d)).toBe(reason);
    expect(appIsUsable(app(appState), d)).toBe(reason === undefined);
  });

  it('no app is not usable', () => {
    expect(appIsUsable(undefined, directory('PROJECT_STATE_ACTIVE', true))).toBe(false);
  });
});
