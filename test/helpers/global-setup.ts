import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Compiles src/ to dist/ once, so every test file starts the same server a user runs; like
 * `npm start`, only when a source is newer than the last good build (scripts/build.mjs), so
 * `npm test` (whose pretest has just built) does not compile twice.
 */
export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync(process.execPath, [`${root}scripts/build.mjs`, '--if-stale'], {
    cwd: root,
    stdio: 'inherit',
  });
}
