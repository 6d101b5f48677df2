import type { MasterKey } from '../../crypto/master-key.js';
import { CONSOLE_STYLESHEET, CONSOLE_STYLESHEET_PATH } from '../../ui/console/styles.js';
import type { Route } from '../types.js';
import { InProcessApi } from './api.js';
import { overviewConsoleRoutes } from './overview.js';
import type { ConsoleKit } from './page.js';
import { projectConsoleRoutes } from './projects.js';
import { signInRoutes } from './sign-in.js';
import { userConsoleRoutes } from './users.js';
import { memberConsoleRoutes } from './members.js';
import { policyConsoleRoutes } from './policies.js';
import { accountConsoleRoutes } from './account.js';
import { settingsConsoleRoutes } from './settings.js';
import { idpConsoleRoutes } from './idps.js';
import { migrationConsoleRoutes } from './migration.js';

/** What the console uses of the wired parts (src/app.ts). */
export interface ConsolePorts {
  masterKey: MasterKey;
  issuer: string;
  isReady: () => boolean;
}

/**
 * The admin console at /ui/console: server-rendered pages over the APIs' own routes (`api`: the
 * management, admin and auth APIs, the token endpoint and the JWKS), as the signed-in person.
 */
export function consoleRoutes(ctx: ConsolePorts, api: readonly Route[]): Route[] {
  const kit: ConsoleKit = { masterKey: ctx.masterKey, issuer: ctx.issuer, api: new InProcessApi(api), csrfKey: ctx.masterKey.deriveKey('console-csrf') };
  return [
    {
      pattern: CONSOLE_STYLESHEET_PATH,
      errorStyle: 'html',
      methods: {
        GET: () => ({ status: 200, headers: { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' }, body: CONSOLE_STYLESHEET }),
      },
    },
    ...signInRoutes(kit),
    ...overviewConsoleRoutes(kit, ctx.isReady),
    ...userConsoleRoutes(kit),
    ...memberConsoleRoutes(kit),
    ...projectConsoleRoutes(kit),
    ...policyConsoleRoutes(kit),
    ...accountConsoleRoutes(kit),
    ...settingsConsoleRoutes(kit),
    ...idpConsoleRoutes(kit),
    ...migrationConsoleRoutes(kit),
  ];
}
