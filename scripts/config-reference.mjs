// `npm run docs:config`: writes docs/configuration.md from the settings table in src/config.ts
// (through the build in dist/). test/unit/config-reference.test.ts fails when the file is stale.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { configurationReference } = await import(join(root, 'dist', 'config-reference.js'));
writeFileSync(join(root, 'docs', 'configuration.md'), configurationReference());
console.log('wrote docs/configuration.md');
