// `npm run build`: tsc -p tsconfig.json, then dist/.build-stamp on success.
// `npm start` (prestart) runs it with --if-stale: it compiles only when a source (src/**, tsconfig.json,
// package.json, package-lock.json) is newer than the stamp, so an unchanged tree starts at once.
// A failed compile leaves no stamp, so the next start compiles (and fails) again instead of serving it.
import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');

function newestMtime(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted or renamed file changes its directory's mtime
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

if (process.argv.includes('--if-stale')) {
  const built = statSync(stamp, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const inputs = ['src', 'tsconfig.json', 'package.json', 'package-lock.json'].map((p) => newestMtime(join(root, p)));
  const main = statSync(join(root, 'dist', 'main.js'), { throwIfNoEntry: false });
  if (built > 0 && main && Math.max(...inputs) <= built) process.exit(0);
  console.log('build: sources changed since the last build, compiling (tsc)');
}

rmSync(stamp, { force: true });
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
// The `sesame` bin is run directly (npx, npm link): tsc writes it without the execute bit.
chmodSync(join(root, 'dist', 'cli.js'), 0o755);
writeFileSync(stamp, `${new Date().toISOString()}\n`);
