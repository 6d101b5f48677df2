// npm postinstall: uWebSockets.js (the @trufflesuite/uws-js-unofficial build) ships its native addon
// for 6 platforms × 3 Node.js ABIs in binaries/ (92 MB), plus a never-loaded copy of the Linux x64
// ones in dist/ (20 MB). Its loader (src/uws.js) only requires
// binaries/uws_<platform>_<arch>_<process.versions.modules>.node. Keep this machine's platform and
// architecture for the ABIs Sesame can run on (Node.js 20, ABI 115, and newer; and the running one),
// remove the rest. Never fails the install; `npm ci` restores the whole package.
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MIN_ABI = 115; // Node.js 20: package.json engines >= 20.12
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'uWebSockets.js');
const prefix = `uws_${process.platform}_${process.arch}_`;
const running = Number(process.versions.modules);

function wanted(name) {
  if (!name.startsWith(prefix)) return false;
  const abi = Number(name.slice(prefix.length, -'.node'.length));
  return abi >= MIN_ABI || abi === running;
}

let removed = 0;
for (const [dir, keepWanted] of [
  ['binaries', true],
  ['dist', false],
]) {
  let names;
  try {
    names = readdirSync(join(pkg, dir));
  } catch {
    continue; // not installed: nothing to prune
  }
  for (const name of names) {
    if (!name.endsWith('.node') || (keepWanted && wanted(name))) continue;
    try {
      rmSync(join(pkg, dir, name), { force: true });
      removed++;
    } catch {
      // leave it: pruning only saves disk space
    }
  }
}
if (removed > 0) {
  const kept = readdirSync(join(pkg, 'binaries')).filter((n) => n.endsWith('.node'));
  console.log(`prune-uws: removed ${removed} uWebSockets.js binaries for other platforms/Node.js versions; kept ${kept.join(', ') || 'none'}`);
}
