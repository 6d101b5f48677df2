#!/usr/bin/env -S node --max-semi-space-size=2
import { CliError, usage } from './cli/errors.js';
import { MAIN_HELP, HELP } from './cli/help.js';

/**
 * The `sesame` command: `start` runs the server (as `node dist/main.js`); `export`, `import` and
 * `keys rotate` work against a running server (`--url`, `--pat-file` or SESAME_PAT) through the
 * admin API, or offline on a data dir no server holds (`--data-dir`), with the same code as the
 * API; `admin-pat` finds or reissues the bootstrap admin's token. Errors: one line
 * `sesame: <what>: <why>` on stderr, exit 2 for usage and settings, 1 for failures.
 */
async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      if (command === undefined) {
        process.stderr.write(MAIN_HELP);
        throw new CliError('', 2);
      }
      if (command === 'help' && rest[0] && HELP[rest[0]]) return void process.stdout.write(HELP[rest[0]]!);
      return void process.stdout.write(MAIN_HELP);
    // Loaded when needed: help and usage errors answer without loading the server.
    case 'start':
      return (await import('./serve.js')).serve(rest, 'sesame start [options]');
    case 'export':
      return (await import('./cli/commands.js')).exportCommand(rest);
    case 'import':
      return (await import('./cli/commands.js')).importCommand(rest);
    case 'keys':
      return (await import('./cli/commands.js')).keysCommand(rest);
    case 'admin-pat':
      return (await import('./cli/commands.js')).adminPatCommand(rest);
    case 'copy':
      return (await import('./cli/copy.js')).copyCommand(rest);
    case 'migrate':
      return (await import('./cli/migrate.js')).migrateCommand(rest);
    default:
      throw usage(`unknown command ${command} (commands: start, export, import, keys rotate, admin-pat, copy, migrate; see sesame --help)`);
  }
}

const argv = process.argv.slice(2);
const command = argv[0];
main(argv).then(
  () => {
    // Offline work leaves nothing running; a server keeps the process alive on its own.
  },
  (error: unknown) => {
    if (command === 'start') return import('./serve.js').then(({ startFailed }) => startFailed(error));
    if (error instanceof CliError) {
      if (error.message)
        process.stderr.write(
          `sesame: ${['export', 'import', 'keys', 'admin-pat', 'copy', 'migrate'].includes(command ?? '') ? `${command === 'keys' ? 'keys rotate' : command}: ` : ''}${error.message}\n`,
        );
      process.exit(error.exitCode);
    }
    process.stderr.write(`sesame: ${command ?? ''}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
