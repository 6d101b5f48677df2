import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from './config.js';
import { urlHost } from './util/url-host.js';
import { FIRST_PERSON, FIRST_PERSON_PASSWORD_FILE } from './services/bootstrap.js';

/**
 * What an operator needs at every start, in plain text on stdout (the JSON log line on stderr
 * carries the same): where Sesame listens, its issuer, its data dir and where the admin PAT is.
 */
export function startupBanner(config: Config, app: { port: number; issuer: string; metricsPort?: number | undefined }): string {
  const dataDir = resolve(config.dataDir);
  const pat = join(dataDir, 'admin.pat');
  const lines = [
    `Sesame is listening on http://${urlHost(config.host)}:${app.port} (bound to ${config.host})`,
    `  issuer     ${app.issuer}`,
    `  data dir   ${dataDir}`,
    ...(config.databaseUrl ? [`  store      PostgreSQL (SESAME_DATABASE_URL)`] : []),
    existsSync(pat)
      ? `  admin PAT  ${pat}`
      : config.databaseUrl
        ? `  admin PAT  not on this node: it is written into the data dir of the node that started the instance, at its first start`
        : `  admin PAT  ${pat} is missing (it is written at the first start only); issue a new one with: sesame admin-pat --new`,
  ];
  lines.push(
    `  console    ${app.issuer}/ui/console${existsSync(join(dataDir, FIRST_PERSON_PASSWORD_FILE)) ? ` (first sign-in: ${FIRST_PERSON}, password in ${join(dataDir, FIRST_PERSON_PASSWORD_FILE)})` : ''}`,
  );
  if (app.metricsPort !== undefined) {
    lines.push(`  metrics    http://${urlHost(config.metricsHost)}:${app.metricsPort}/metrics${config.metricsToken ? ' (bearer token: SESAME_METRICS_TOKEN)' : ''}`);
  }
  if (config.tracing) lines.push(`  tracing    ${config.tracing.endpoint} (OTLP ${config.tracing.protocol})`);
  return `${lines.join('\n')}\n`;
}
