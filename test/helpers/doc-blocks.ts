import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A fenced block of the README or a guide in docs/, as test/docs.test.ts runs them (and
 * test/multi-node.test.ts the two-node example): the language, where it starts, its text, and the
 * reason it is skipped, if it is (`<!-- doc-test: skip (reason) -->` on the line before).
 */
export interface Block {
  lang: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
  skip?: string;
}

export function docBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    let prev = start - 1;
    while (prev >= 0 && lines[prev]!.trim() === '') prev--;
    const skip = prev >= 0 ? /^<!--\s*doc-test:\s*skip\s*\((.+)\)\s*-->\s*$/.exec(lines[prev]!)?.[1] : undefined;
    blocks.push({ lang: open[1]!, line: start + 1, text: `${body.join('\n')}\n`, ...(skip ? { skip } : {}) });
  }
  return blocks;
}

/** The blocks a doc-test runs: `sh` and `js`, unless skipped. */
export function runnableBlocks(markdown: string): Block[] {
  return docBlocks(markdown).filter((b) => !b.skip && (b.lang === 'sh' || b.lang === 'js'));
}

/**
 * The guides whose examples a guide continues from (`<!-- doc-test: after sign-in.md -->`), besides
 * the README's first token, which every guide continues from.
 */
export function docPrerequisites(markdown: string): string[] {
  return [...markdown.matchAll(/^<!--\s*doc-test:\s*after\s+([^>]+?)\s*-->\s*$/gm)].flatMap((m) => m[1]!.split(/[\s,]+/));
}

/** The README and every guide in docs/, as paths relative to the checkout. */
export function docFiles(root: string): string[] {
  const guides = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort();
  return ['README.md', ...guides.map((f) => `docs/${f}`)];
}

export function readDoc(root: string, file: string): string {
  return readFileSync(join(root, file), 'utf8');
}
