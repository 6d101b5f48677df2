import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Compiles src/ to dist/ once, so every test file starts the same server a user runs. */
export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
