import { rmSync } from 'node:fs';
import { loadConfig } from '../src/config.js';
import { openMasterKey } from '../src/directory.js';
import { openStorage } from '../src/storage/db.js';
import { buildLocalRoutes } from '../src/threads/local-routes.js';
import { SignatureCheck } from '../src/workers/signature-check.js';
import { ReplayGuardActor } from '../src/actors/replay-guard.js';
import { startServer, tempDataDir } from '../test/helpers/server.js';
import { benchPasswordHash, generateOrg, MIGRATE_SIZE } from './scenarios/migrate.js';

/**
 * What a directory change costs an HTTP acceptor thread: it takes the changed records into its
 * copy one by one (the directory's change feed), or, at its start or when too far behind, loads
 * the copy whole from LMDB (src/threads/local-routes.ts). Imports the bench's generated org
 * (10,000 people, 100 projects, 500 apps) into a fresh data dir, stops the server and times both
 * there: the whole load, and taking every change the import logged.
 *
 *   node dist-bench/bench/directory-reload.js
 */
const dataDir = tempDataDir();
try {
  const server = await startServer({ dataDir, env: { SESAME_HTTP_THREADS: '1' } });
  const { bundle } = generateOrg(MIGRATE_SIZE, benchPasswordHash());
  const imported = await fetch(`${server.url}/admin/v1/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.pat}`, 'content-type': 'application/json' },
    body: JSON.stringify({ timeout: '30m', dataOrgs: bundle }),
  });
  if (imported.status !== 200) throw new Error(`import answered ${imported.status}: ${(await imported.text()).slice(0, 300)}`);
  await server.stop('SIGTERM');

  const config = loadConfig({ SESAME_DATA_DIR: dataDir }, []);
  const storage = openStorage(dataDir, config.durability);
  const masterKey = await openMasterKey(storage, config);
  const times: number[] = [];
  let local: ReturnType<typeof buildLocalRoutes> | undefined;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    local = buildLocalRoutes({
      config,
      issuer: 'http://localhost:8080',
      storage,
      masterKey,
      signatureCheck: new SignatureCheck(),
      replayGuard: new ReplayGuardActor(storage.records),
      askMainThread: () => Promise.reject(new Error('not asked while reloading')),
    });
    times.push(performance.now() - started);
  }
  // Every change the import logged, taken again into a loaded copy (each record read and indexed anew).
  const feed = storage.directoryLog.since(0, Number.MAX_SAFE_INTEGER)!;
  const taking: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    if (!local!.takeChanges(feed.changes)) throw new Error('a logged change was not taken');
    taking.push(performance.now() - started);
  }
  await storage.close();
  const best = Math.min(...taking);
  console.log(`directory of ${MIGRATE_SIZE.users} people, ${MIGRATE_SIZE.projects} projects, ${MIGRATE_SIZE.apps} apps: reload ${times.map((t) => t.toFixed(0)).join(', ')} ms`);
  console.log(
    `its ${feed.changes.length} logged changes taken one by one: ${taking.map((t) => t.toFixed(0)).join(', ')} ms (${((best * 1000) / feed.changes.length).toFixed(1)} µs per change at best)`,
  );
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
