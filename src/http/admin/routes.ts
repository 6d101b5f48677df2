import type { Route } from '../types.js';
import { appKeyRoutes } from './app-keys.js';
import { appRoutes } from './apps.js';
import { humanUserRoutes } from './human-users.js';
import { instanceSettingsRoutes } from './instance-settings.js';
import { signingKeyRoutes, type SigningKeysPorts } from './signing-keys.js';
import { machineCredentialRoutes } from './machine-credentials.js';
import { instanceMemberRoutes, orgMemberRoutes } from './members.js';
import { migrationRoutes } from './migration.js';
import { orgRoutes } from './orgs.js';
import { policyRoutesAll } from './policies.js';
import { idpRoutes, type IdpsPorts } from './idps.js';
import { smtpRoutes, type SmtpPorts } from './smtp.js';
import { labelAssetRoutes, type LabelAssetsPorts } from './label-assets.js';
import { userFactorRoutes, type UserFactorsPorts } from './user-factors.js';
import { messageTextRoutes, type MessageTextsPorts } from './message-texts.js';
import { userNotificationRoutes, type UserNotificationsPorts } from './user-notifications.js';
import { projectRoleRoutes } from './project-roles.js';
import { eventRoutes, type EventsPorts } from './events.js';
import { projectRoutes } from './projects.js';
import { userGrantRoutes } from './user-grants.js';
import { userMetadataRoutes } from './user-metadata.js';
import { userRoutes } from './users.js';
import { myUserRoutes } from './my-user.js';
import { sessionRoutes } from './sessions.js';
import type { SessionsPorts } from './sessions.js';
import { myFactorRoutes } from './my-factors.js';
import { userLifecycleRoutes, type UserLifecyclePorts } from './user-lifecycle.js';
import type { AppsPorts } from './apps.js';
import type { MigrationPorts } from './migration.js';
import type { MembersPorts } from './members.js';
import type { MyFactorsPorts } from './my-factors.js';
import type { HumanUsersPorts } from './human-users.js';
import type { AppKeysPorts } from './app-keys.js';
import type { UserMetadataPorts } from './user-metadata.js';
import type { ProjectRolesPorts } from './project-roles.js';
import type { ProjectsPorts } from './projects.js';
import type { UserGrantsPorts } from './user-grants.js';
import type { UsersPorts } from './users.js';
import type { InstanceSettingsPorts } from './instance-settings.js';
import type { OrgsPorts } from './orgs.js';
import type { MachineCredentialsPorts } from './machine-credentials.js';
import type { PoliciesPorts } from './policies.js';

/** What this module uses of the wired parts (src/app.ts). */
export type ManagementRoutesPorts = AppsPorts &
  SessionsPorts &
  MyFactorsPorts &
  MigrationPorts &
  MembersPorts &
  HumanUsersPorts &
  AppKeysPorts &
  UserMetadataPorts &
  ProjectRolesPorts &
  ProjectsPorts &
  UserGrantsPorts &
  UsersPorts &
  InstanceSettingsPorts &
  OrgsPorts &
  MachineCredentialsPorts &
  PoliciesPorts &
  SigningKeysPorts &
  UserLifecyclePorts &
  SmtpPorts &
  UserNotificationsPorts &
  MessageTextsPorts &
  UserFactorsPorts &
  LabelAssetsPorts &
  IdpsPorts &
  EventsPorts;

/**
 * Provisioning API routes (ZITADEL management/admin v1 subset). Routes sharing a pattern are
 * merged into one, since the server registers one handler per pattern.
 */
export function managementRoutes(ctx: ManagementRoutesPorts): Route[] {
  const all = [
    ...orgRoutes(ctx),
    ...orgMemberRoutes(ctx),
    ...instanceMemberRoutes(ctx),
    ...projectRoutes(ctx),
    ...projectRoleRoutes(ctx),
    ...appRoutes(ctx),
    ...appKeyRoutes(ctx),
    ...userRoutes(ctx),
    ...myUserRoutes(ctx),
    ...sessionRoutes(ctx),
    ...myFactorRoutes(ctx),
    ...humanUserRoutes(ctx),
    ...userLifecycleRoutes(ctx),
    ...machineCredentialRoutes(ctx),
    ...userGrantRoutes(ctx),
    ...userMetadataRoutes(ctx),
    ...policyRoutesAll(ctx),
    ...idpRoutes(ctx),
    ...instanceSettingsRoutes(ctx),
    ...smtpRoutes(ctx),
    ...labelAssetRoutes(ctx),
    ...userFactorRoutes(ctx),
    ...messageTextRoutes(ctx),
    ...userNotificationRoutes(ctx),
    ...signingKeyRoutes(ctx),
    ...migrationRoutes(ctx),
    ...eventRoutes(ctx),
  ];
  const byPattern = new Map<string, Route>();
  for (const route of all) {
    const existing = byPattern.get(route.pattern);
    if (!existing) {
      byPattern.set(route.pattern, route);
      continue;
    }
    for (const method of Object.keys(route.methods)) {
      if (method in existing.methods) throw new Error(`duplicate route ${method} ${route.pattern}`);
    }
    byPattern.set(route.pattern, { ...existing, methods: { ...existing.methods, ...route.methods } });
  }
  return [...byPattern.values()];
}
