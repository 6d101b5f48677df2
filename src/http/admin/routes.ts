import type { AppContext } from '../../services/ports.js';
import type { Route } from '../types.js';
import { appKeyRoutes } from './app-keys.js';
import { appRoutes } from './apps.js';
import { humanUserRoutes } from './human-users.js';
import { instanceSettingsRoutes } from './instance-settings.js';
import { machineCredentialRoutes } from './machine-credentials.js';
import { instanceMemberRoutes, orgMemberRoutes } from './members.js';
import { migrationRoutes } from './migration.js';
import { orgRoutes } from './orgs.js';
import { policyRoutesAll } from './policies.js';
import { projectRoleRoutes } from './project-roles.js';
import { projectRoutes } from './projects.js';
import { userGrantRoutes } from './user-grants.js';
import { userMetadataRoutes } from './user-metadata.js';
import { userRoutes } from './users.js';

/**
 * Provisioning API routes (ZITADEL management/admin v1 subset). Routes sharing a pattern are
 * merged into one, since the server registers one handler per pattern.
 */
export function managementRoutes(ctx: AppContext): Route[] {
  const all = [
    ...orgRoutes(ctx),
    ...orgMemberRoutes(ctx),
    ...instanceMemberRoutes(ctx),
    ...projectRoutes(ctx),
    ...projectRoleRoutes(ctx),
    ...appRoutes(ctx),
    ...appKeyRoutes(ctx),
    ...userRoutes(ctx),
    ...humanUserRoutes(ctx),
    ...machineCredentialRoutes(ctx),
    ...userGrantRoutes(ctx),
    ...userMetadataRoutes(ctx),
    ...policyRoutesAll(ctx),
    ...instanceSettingsRoutes(ctx),
    ...migrationRoutes(ctx),
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
