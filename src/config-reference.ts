import { flagName, SETTINGS } from './config.js';

/**
 * docs/configuration.md, made from the one settings table (src/config.ts): `npm run docs:config`
 * writes it, and a test fails when the file and the table disagree (CI's drift check).
 */
export function configurationReference(): string {
  const rows = Object.entries(SETTINGS).map(([name, s]) => {
    // The meanings link to the guides beside this file in docs/.
    return `| \`${s.env}\` | \`${flagName(name)}\` | ${s.shown} | ${s.doc} |`;
  });
  return [
    '# Configuration reference',
    '',
    '<!-- Generated from the settings table in src/config.ts by `npm run docs:config`; CI fails when they disagree. Edit the table, not this file. -->',
    '',
    'Every setting is an environment variable with a command-line twin (`npm start -- --port 9000`); flags win.',
    'A bad value stops start-up with a message naming the setting and exit code 2. `npm start -- --help` lists them.',
    '',
    '| Environment | Flag | Default | Meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
