import { serve, startFailed } from './serve.js';

/** Entry point: `npm start` (node dist/main.js); the same as `sesame start` (src/cli.ts). */
serve(process.argv.slice(2)).catch(startFailed);
