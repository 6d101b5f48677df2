import { readFileSync } from 'node:fs';
import { MasterKeyMismatchError } from '../directory.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { ApiError } from '../model/errors.js';
import { openDataDir, OfflineError, type OfflineDir } from './offline.js';
import { setLogLevel } from '../util/log.js';

import { CliError, usage, failure } from './errors.js';
import { type Parsed, last, envValue } from './args.js';

/** Where a command works: a running server (`--url`, a PAT) or a data dir no server holds (`--data-dir`). */
export type Target = { kind: 'online'; url: URL; token: string } | { kind: 'offline'; config: Config; signingAlgSet: boolean };

export const TARGET_OPTIONS = ['--url', '--pat-file', '--data-dir'];

export function target(p: Parsed, forceOffline = false): Target {
  const urlFlag = last(p, '--url');
  const dirFlag = last(p, '--data-dir');
  if (urlFlag !== undefined && dirFlag !== undefined) throw usage('give either --url (a running server) or --data-dir (offline), not both');
  let mode: 'online' | 'offline';
  if (forceOffline || dirFlag !== undefined) mode = 'offline';
  else if (urlFlag !== undefined) mode = 'online';
  else if (envValue('SESAME_URL') !== undefined) mode = 'online';
  else if (envValue('SESAME_DATA_DIR') !== undefined) mode = 'offline';
  else throw usage('give --url URL (a running server, with --pat-file or SESAME_PAT) or --data-dir DIR (offline)');

  if (mode === 'online') {
    if (p.rest.length > 0) throw usage(`unknown option ${p.rest[0]} (server settings apply only offline, with --data-dir; see --help)`);
    const raw = urlFlag ?? envValue('SESAME_URL')!;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw usage(`--url ${JSON.stringify(raw)}: not a URL such as http://localhost:8080`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usage(`--url ${JSON.stringify(raw)}: must be http or https`);
    const patFile = last(p, '--pat-file') ?? envValue('SESAME_PAT_FILE');
    let token: string | undefined;
    if (patFile !== undefined) {
      try {
        token = readFileSync(patFile, 'utf8').trim();
      } catch (error) {
        throw usage(`--pat-file ${patFile}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
      }
      if (!token) throw usage(`--pat-file ${patFile}: the file is empty`);
    } else {
      token = envValue('SESAME_PAT');
    }
    if (!token) throw usage('a token is needed with --url: --pat-file FILE (e.g. data/admin.pat) or SESAME_PAT');
    return { kind: 'online', url, token };
  }
  if (last(p, '--pat-file') !== undefined) throw usage('--pat-file is for --url (a running server); offline, --data-dir needs no token');
  const settings = [...p.rest];
  if (dirFlag !== undefined) settings.push('--data-dir', dirFlag);
  // Offline commands log warnings only, unless asked for more.
  const env = { ...process.env };
  if (!env.SESAME_LOG_LEVEL) env.SESAME_LOG_LEVEL = 'warn';
  let config: Config;
  try {
    config = loadConfig(env, settings);
  } catch (error) {
    if (error instanceof ConfigError) throw usage(error.message);
    throw error;
  }
  setLogLevel(config.logLevel);
  const signingAlgSet = envValue('SESAME_SIGNING_ALG') !== undefined || settings.some((a) => a === '--signing-alg' || a.startsWith('--signing-alg='));
  return { kind: 'offline', config, signingAlgSet };
}

export async function withDataDir<T>(
  t: Extract<Target, { kind: 'offline' }>,
  create: boolean,
  work: (dir: OfflineDir) => Promise<T>,
  inUseHint = 'stop it, or go through its API with --url and --pat-file',
): Promise<T> {
  let dir: OfflineDir;
  try {
    dir = await openDataDir(t.config, { create, signingAlgSet: t.signingAlgSet });
  } catch (error) {
    if (error instanceof OfflineError) throw new CliError(error.inUse ? `${error.message}: ${inUseHint}` : error.message, error.exitCode);
    if (error instanceof MasterKeyMismatchError) throw usage(`data dir ${t.config.dataDir}: ${error.message} (give the server's SESAME_MASTERKEY or --master-key)`);
    throw failure(`data dir ${t.config.dataDir}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return await work(dir);
  } catch (error) {
    if (error instanceof ApiError) throw failure(error.message);
    throw error;
  } finally {
    await dir.close();
  }
}
