/**
 * Sesame's layers, checked by `npm run deps` (dependency-cruiser) in CI. Each layer imports only
 * the layers below it (type-only imports count too):
 *
 *   composition root  src/app.ts, src/compose.ts, src/directory.ts, src/cli.ts, src/cli/, src/serve.ts, src/main.ts, src/banner.ts,
 *                     src/threads/ (the HTTP acceptor threads: each composes its own copy)
 *   http              src/http/      (the only user of src/ui/)
 *   services          src/services/
 *   rules             src/protocol/  src/zitadel/  src/domain/   (pure)
 *   actors            src/actors/    (the only users of src/storage/)
 *   workers           src/workers/
 *   storage           src/storage/
 *   leaves            src/crypto/  src/model/  src/util/  src/observability/  src/config.ts
 *
 * src/observability/ (metrics and tracing) is a leaf every layer may count or trace from; it imports
 * nothing of Sesame's but src/config.ts's types, and the composition root wires it.
 */
const ROOT = "^src/(app|compose|cli|directory|serve|main|banner)\\.ts$|^src/cli/|^src/threads/";
const layer = (...folders) => `^src/(${folders.join('|')})/`;
const LEAVES = ['crypto', 'model', 'util', 'observability'];

/** What each folder may import besides itself (and src/config.ts, a leaf). */
const ALLOWED = {
  http: ['ui', 'services', 'protocol', 'zitadel', 'domain', 'actors', 'workers', ...LEAVES],
  ui: [...LEAVES],
  services: ['protocol', 'zitadel', 'domain', 'actors', 'workers', ...LEAVES],
  protocol: ['domain', 'actors', ...LEAVES],
  zitadel: ['protocol', 'domain', 'actors', ...LEAVES],
  domain: ['actors', ...LEAVES],
  actors: ['workers', 'storage', ...LEAVES],
  workers: [...LEAVES],
  storage: [...LEAVES],
  crypto: ['model', 'util'],
  model: [],
  util: [],
  observability: [],
};

module.exports = {
  forbidden: [
    ...Object.entries(ALLOWED).map(([folder, allowed]) => ({
      name: `${folder}-imports-only-lower-layers`,
      comment: `src/${folder}/ may import only: ${allowed.length ? allowed.map((f) => `src/${f}/`).join(', ') : 'nothing else in src'} (and src/config.ts)`,
      severity: 'error',
      from: { path: `^src/${folder}/` },
      to: { path: '^src/', pathNot: [`^src/${folder}/`, '^src/config\\.ts$', ...(allowed.length ? [layer(...allowed)] : [])] },
    })),
    {
      name: 'only-the-root-imports-the-root',
      comment: 'the composition root wires everything; nothing below imports it',
      severity: 'error',
      from: { pathNot: ROOT },
      to: { path: ROOT },
    },
    {
      name: 'config-is-a-leaf',
      severity: 'error',
      from: { path: '^src/config\\.ts$' },
      to: { path: '^src/', pathNot: ['^src/util/', '^src/config\\.ts$'] },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles between modules',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
