import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Code comments cite the ZITADEL compatibility page by section number
 * (`docs/compatibility.md §3.3`). This check keeps the citations honest: each cited number is a
 * heading of the page (`## 3. OIDC provider`, `### 3.3 Claims per token`), and no comment cites
 * the documents the page replaced (`compat §3.3`, `seed "Errors"`), which are not in the repository.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = 'docs/compatibility.md';

/** `## 3. OIDC provider` → 3, `### 3.3 Claims per token` → 3.3. */
const HEADING = /^#{2,6}\s+(\d+(?:\.\d+)*)\.?\s/;
/** The page's name and the section numbers after it: `docs/compatibility.md §3.2, §4.3`. */
const CITATION = /docs\/compatibility\.md((?:(?:\s*,\s*|\s+and\s+|\s+)§\d+(?:\.\d+)*)*)/g;
const SECTION = /§(\d+(?:\.\d+)*)/g;
/** Citations of the documents the page replaced. */
const STALE: readonly RegExp[] = [/\bcompat(?:\s+spec)?\s*§/i, /\bZITADEL compat\b/i, /\bseed\s*[":)]/i, /\bthe seed's\b/i, /\bper the seed\b/i, /zitadel-compat\.md|seed-identity-service\.md/i];

/** Every section number the page has a heading for; a number used twice is an error. */
function pageSections(markdown: string): { sections: Set<string>; duplicates: string[] } {
  const sections = new Set<string>();
  const duplicates: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const match = fenced ? null : HEADING.exec(line);
    if (!match) continue;
    if (sections.has(match[1]!)) duplicates.push(match[1]!);
    sections.add(match[1]!);
  }
  return { sections, duplicates };
}

/** What is wrong with the citations of some source files, as `file:line: problem`. */
function citationProblems(files: readonly { path: string; text: string }[], sections: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const { path, text } of files) {
    for (const [index, line] of text.split('\n').entries()) {
      const where = `${path}:${index + 1}`;
      for (const citation of line.matchAll(CITATION)) {
        const numbers = [...citation[1]!.matchAll(SECTION)].map((m) => m[1]!);
        if (numbers.length === 0) problems.push(`${where}: cites ${PAGE} without a section number (keep "${PAGE} §N.N" on one line)`);
        for (const number of numbers) if (!sections.has(number)) problems.push(`${where}: cites ${PAGE} §${number}, which has no heading there`);
      }
      const stale = STALE.find((pattern) => pattern.test(line));
      if (stale) problems.push(`${where}: cites a document that is not in the repository (${stale.source}); cite ${PAGE} §N.N instead`);
    }
  }
  return problems;
}

function sourceFiles(dir: string): { path: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [{ path: relative(ROOT, full), text: readFileSync(full, 'utf8') }] : [];
  });
}

describe('compatibility citations', () => {
  const { sections, duplicates } = pageSections(readFileSync(join(ROOT, PAGE), 'utf8'));

  it('the page numbers its sections once each, as the ZITADEL spec does (§0 to §7 and their subsections)', () => {
    expect(duplicates).toEqual([]);
    for (const number of ['0', '1', '1.1', '1.2', '1.3', '1.4', '1.5', '1.6', '2', '2.1', '2.2', '2.3', '3', '3.1', '3.2', '3.3', '4', '4.1', '4.2', '4.3', '4.4', '4.5', '5', '6', '7']) {
      expect(sections, `§${number}`).toContain(number);
    }
  });

  it('every docs/compatibility.md §N.N cited in src/ is a heading of the page, and no comment cites the old documents', () => {
    const files = sourceFiles(join(ROOT, 'src'));
    expect(files.some((f) => f.text.includes(`${PAGE} §`))).toBe(true);
    expect(citationProblems(files, sections)).toEqual([]);
  });

  it('names the file and line of a citation that does not resolve', () => {
    const file = {
      path: 'src/example.ts',
      text: [
        '/** Fine (docs/compatibility.md §3.3, §4.2 and §5). */',
        '/** Gone (docs/compatibility.md §9.9). */',
        '// Old (compat §3.3), older (seed "Errors").',
        '// Split docs/compatibility.md',
      ].join('\n'),
    };
    expect(citationProblems([file], new Set(['3.3', '4.2', '5']))).toEqual([
      'src/example.ts:2: cites docs/compatibility.md §9.9, which has no heading there',
      expect.stringMatching(/^src\/example\.ts:3: cites a document that is not in the repository/),
      expect.stringMatching(/^src\/example\.ts:4: cites docs\/compatibility\.md without a section number/),
    ]);
  });
});
