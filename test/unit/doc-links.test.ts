import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { docFiles } from '../helpers/doc-blocks.js';

/**
 * The docs a newcomer navigates: the README stays a first screen and a map (at most 15 KB) that
 * names every guide, and every relative link in the README and docs/ leads to a file that exists and,
 * with a `#fragment`, to a heading in it (GitHub's anchors).
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const files = docFiles(root);

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings (outside code blocks), with GitHub's -1, -2 for repeats. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let inCode = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) inCode = !inCode;
    const heading = !inCode && /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const base = anchorOf(heading[1]!.replace(/`/g, ''));
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** Relative links `[text](target)` outside code blocks, with their line. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  let inCode = false;
  markdown.split('\n').forEach((line, index) => {
    if (/^```/.test(line)) inCode = !inCode;
    if (inCode) return;
    for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^[a-z]+:/i.test(m[1]!)) links.push({ target: m[1]!, line: index + 1 });
    }
  });
  return links;
}

describe('the docs map', () => {
  it('keeps the README to a first screen and a map: at most 15 KB', () => {
    expect(statSync(join(root, 'README.md')).size).toBeLessThanOrEqual(15 * 1024);
  });

  it('names every guide in docs/ in the README', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const guide of files.filter((f) => f.startsWith('docs/'))) expect(readme, `the README's map leaves out ${guide}`).toContain(`](${guide})`);
  });

  it('has no relative link to a missing file or heading', () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const { target, line } of linksOf(text)) {
        const [path, fragment] = target.split('#') as [string, string | undefined];
        const resolved = path ? normalize(join(dirname(join(root, file)), path)) : join(root, file);
        if (!existsSync(resolved)) {
          broken.push(`${file}:${line}: ${target} (no file ${relative(root, resolved)})`);
          continue;
        }
        if (fragment && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(fragment)) {
          broken.push(`${file}:${line}: ${target} (no heading #${fragment} in ${relative(root, resolved)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
