import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md is the map a newcomer reads to find their way in the code: every path it
 * names in backticks (`src/…`, `test/…`) must exist, and every folder directly under src/ must be
 * on it (as `src/<folder>/`), so the page cannot drift from the tree unnoticed.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const PAGE = 'docs/architecture.md';

/** The inline code spans of a Markdown text, outside fenced blocks, with their 1-based lines. */
function codeSpans(markdown: string): { text: string; line: number }[] {
  const spans: { text: string; line: number }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    for (const match of line.matchAll(/`([^`]+)`/g)) spans.push({ text: match[1]!, line: index + 1 });
  });
  return spans;
}

/** The paths (`src/…`, `test/…`) a page names that do not exist under `root`, as `line N: path`. */
function missingPaths(markdown: string, root: string): string[] {
  return codeSpans(markdown)
    .filter(({ text }) => text.startsWith('src/') || text.startsWith('test/'))
    .filter(({ text }) => !existsSync(join(root, text)))
    .map(({ text, line }) => `line ${line}: ${text}`);
}

/** The folders of `folders` that a page does not name as `src/<folder>/` in backticks. */
function unnamedFolders(markdown: string, folders: readonly string[]): string[] {
  const named = new Set(codeSpans(markdown).map(({ text }) => text));
  return folders.filter((folder) => !named.has(`src/${folder}/`));
}

const srcFolders = () =>
  readdirSync(join(ROOT, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

describe(PAGE, () => {
  const page = readFileSync(join(ROOT, PAGE), 'utf8');

  it('names only paths that exist', () => {
    expect(missingPaths(page, ROOT), `paths on ${PAGE} that do not exist`).toEqual([]);
  });

  it('names every folder directly under src/', () => {
    expect(unnamedFolders(page, srcFolders()), `folders of src/ missing from ${PAGE} (name each as \`src/<folder>/\`)`).toEqual([]);
  });

  it('the checks fail on a page that names a missing path or leaves a folder out', () => {
    const broken = ['# Page', '', '`src/app.ts` and `src/no-such-file.ts`, `test/unit/none.test.ts`.', '```text', '`src/also-missing.ts` in a fence is not checked', '```', '`src/http/`'].join('\n');
    expect(missingPaths(broken, ROOT)).toEqual(['line 3: src/no-such-file.ts', 'line 3: test/unit/none.test.ts']);
    expect(unnamedFolders(broken, ['http', 'storage'])).toEqual(['storage']);
  });
});
