import { describe, expect, it } from 'vitest';
import { importJobPage } from '../../src/ui/console/migration.js';
import { consoleTranslator } from '../../src/ui/console/texts.js';

/**
 * The console's page of one import while it runs (the browser test sees imports that are over
 * before the page loads): the phase, a bar of the orgs done, and what was committed so far.
 */
const t = consoleTranslator('en');
const text = (h: unknown) =>
  String(h)
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ');

describe("an import's page", () => {
  it('shows a running import: the orgs done of all, a bar, the counts so far, that it reloads itself', () => {
    const page = String(importJobPage(t, { id: '1', state: 'running', phase: 'orgs', orgsTotal: 4, orgsDone: 1, users: 120, projects: 2, errors: 3 }));
    expect(page).toContain('<progress max="4" value="1"');
    expect(text(page)).toContain('Organizations: 1 of 4');
    expect(text(page)).toContain('120 users, 2 projects, 0 apps imported; 3 refused');
    expect(text(page)).toContain('This page refreshes itself');
  });

  it('shows the later phases with a full bar, and an interrupted or failed import without one', () => {
    expect(String(importJobPage(t, { id: '1', state: 'running', phase: 'grants', orgsTotal: 4, orgsDone: 4 }))).toContain('<progress max="4" value="4"');
    const interrupted = String(importJobPage(t, { id: '1', state: 'interrupted', phase: 'orgs', orgsTotal: 4, orgsDone: 1 }));
    expect(text(interrupted)).toContain('Interrupted (the server running it stopped)');
    expect(interrupted).not.toContain('<progress');
    const failed = String(importJobPage(t, { id: '1', state: 'failed', error: { message: 'the import ran out of time (timeout 1s)' } }));
    expect(text(failed)).toContain('the import ran out of time');
  });

  it('speaks German', () => {
    expect(text(importJobPage(consoleTranslator('de'), { id: '1', state: 'running', phase: 'orgs', orgsTotal: 2, orgsDone: 1 }))).toContain('Organisationen: 1 von 2');
  });
});
