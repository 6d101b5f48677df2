import { INSTANCE_POLICY } from '../model/records.js';

/**
 * Whose label and privacy policies a login page shows (ZITADEL's private labeling): the project's
 * org when the project enforces its own (`…ENFORCE_PROJECT_RESOURCE_OWNER_POLICY`); the person's
 * org once known when it allows theirs (`…ALLOW_LOGIN_USER_RESOURCE_OWNER_POLICY`, the project's
 * org before); otherwise the org the request named (its org scope), else the instance's.
 */
export function brandingOrgId(setting: string, projectOrgId: string | undefined, requestedOrgId: string | undefined, userOrgId: string | undefined): string {
  if (setting === 'PRIVATE_LABELING_SETTING_ENFORCE_PROJECT_RESOURCE_OWNER_POLICY' && projectOrgId) return projectOrgId;
  if (setting === 'PRIVATE_LABELING_SETTING_ALLOW_LOGIN_USER_RESOURCE_OWNER_POLICY') return userOrgId ?? requestedOrgId ?? projectOrgId ?? INSTANCE_POLICY;
  return requestedOrgId ?? INSTANCE_POLICY;
}
