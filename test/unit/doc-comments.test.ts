import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A doc comment (`/** … *\/`) in src/ sits directly above the declaration it describes, so editors
 * show it there. One followed by a blank line, an import, another comment (editors show only the
 * last of two doc comments), a closing bracket or the end of the file documents nothing, or the
 * wrong thing. A comment that describes a whole module goes above the module's main declaration.
 */
const ROOT = join(import.meta.dirname, '..', '..');

/** Where a doc comment of `source` is followed by no declaration: its 1-based line and why. */
function detachedDocComments(source: string): { line: number; reason: string }[] {
  const lines = source.split('\n');
  const found: { line: number; reason: string }[] = [];
  for (let start = 0; start < lines.length; start++) {
    if (!/^\s*\/\*\*(?!\/)/.test(lines[start]!)) continue;
    let end = start;
    while (end < lines.length && !lines[end]!.includes('*/', end === start ? lines[start]!.indexOf('/**') + 3 : 0)) end++;
    if (end === lines.length) break;
    const endLine = lines[end]!;
    const rest = endLine.slice(endLine.indexOf('*/', end === start ? endLine.indexOf('/**') + 3 : 0) + 2).trim();
    if (rest === '') {
      const next = lines[end + 1];
      const reason =
        next === undefined
          ? 'the file ends after it'
          : next.trim() === ''
            ? 'a blank line follows it'
            : /^\s*import\b/.test(next)
              ? 'an import follows it'
              : /^\s*\/[*/]/.test(next)
                ? 'another comment follows it'
                : /^\s*[}\])]/.test(next)
                  ? 'a closing bracket follows it'
                  : undefined;
      if (reason) found.push({ line: start + 1, reason });
    }
    start = end;
  }
  return found;
}

const sources = (): string[] =>
  (readdirSync(join(ROOT, 'src'), { recursive: true }) as string[])
    .filter((path) => path.endsWith('.ts'))
    .map((path) => `src/${path.split('\\').join('/')}`)
    .sort();

describe('doc comments in src/', () => {
  it('each sits directly above a declaration', () => {
    const detached = sources().flatMap((path) => detachedDocComments(readFileSync(join(ROOT, path), 'utf8')).map(({ line, reason }) => `${path}:${line}: ${reason}`));
    expect(detached, 'doc comments attached to no declaration (move each right above what it describes)').toEqual([]);
  });

  it('the check fails on a detached doc comment', () => {
    const source = [
      '/** A module comment before the imports. */',
      "import { x } from './x.js';",
      '',
      '/**',
      ' * A comment followed by a blank line.',
      ' */',
      '',
      'export const a = 1;',
      '/** A comment followed by another. */',
      '/** The one an editor shows. */',
      'export function b(): void {}',
      'interface C {',
      '  /** A member that is gone. */',
      '}',
      '/** Attached. */',
      'export const d = x; /** inline, not checked */',
      'const e = { /** inline too */ f: 1 };',
      '/** At the end. */',
    ].join('\n');
    expect(detachedDocComments(source)).toEqual([
      { line: 1, reason: 'an import follows it' },
      { line: 4, reason: 'a blank line follows it' },
      { line: 9, reason: 'another comment follows it' },
      { line: 13, reason: 'a closing bracket follows it' },
      { line: 18, reason: 'the file ends after it' },
    ]);
  });
});
