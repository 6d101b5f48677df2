/**
 * The README's fenced blocks, as test/readme.test.ts runs them (and test/multi-node.test.ts its
 * two-node example): the language, where each starts, its text, and the reason it is skipped, if
 * it is (`<!-- doc-test: skip (reason) -->` on the line before).
 */
export interface Block {
  lang: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
  skip?: string;
}

export function readmeBlocks(markdown: string): Block[] {
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
