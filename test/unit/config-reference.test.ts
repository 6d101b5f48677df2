import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configurationReference } from '../../src/config-reference.js';
import { helpText, SETTINGS } from '../../src/config.js';

/**
 * The drift check: docs/configuration.md is what the settings table in src/config.ts makes of it
 * (`npm run docs:config` writes it), so the reference, `--help` and the schema cannot disagree.
 */
describe('configuration reference', () => {
  it('docs/configuration.md is generated from the settings table (run `npm run docs:config` after changing it)', () => {
    const written = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(written).toBe(configurationReference());
  });

  it('names every setting, with its flag, in the reference and in --help', () => {
    const reference = configurationReference();
    const help = helpText();
    for (const setting of Object.values(SETTINGS)) {
      expect(reference).toContain(`\`${setting.env}\``);
      expect(help).toContain(setting.env);
    }
  });
});
