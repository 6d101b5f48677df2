#!/usr/bin/env node
import { createReadStream, existsSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { dirname, join, resolve } from 'node:path';
import { MasterKeyMismatchError } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { validate } from './zitadel/validation.js';
import { ApiError } from './model/errors.js';
import { exportRequestSchema, parseImportRequest } from './services/migration/request.js';
import { exportData, importData } from './services/migration/run.js';
import { JsonScanner } from './services/migration/json-scan.js';
import { camelMembers, scanDocument } from './services/migration/source.js';
import { serve, startFailed } from './serve.js';
import { openDataDir, OfflineError, type OfflineDir } from './cli/offline.js';
import { setLogLevel } from './util/log.js';

/**
 * The `sesame` command: `start` runs the server (as `node dist/main.js`); `export`, `import` and
 * `keys rotate` work against a running server (`--url`, `--pat-file` or SESAME_PAT) through the
 * admin API, or offline on a data dir no server holds (`--data-dir`), with the same code as the
 * API; `admin-pat` finds or reissues the bootstrap admin's token. Errors: one line
 * `sesame: <what>: <why>` on stderr, exit 2 for usage and settings, 1 for failures.
 */
class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}
const usage = (message: string) => new CliError(message, 2);
const failure = (message: string) => new CliError(message, 1);

const MAIN_HELP = `Usage: sesame <command> [options]

Commands:
  start              run the server (options: sesame start --help; the same as node dist/main.js)
  export             write organizations to a ZITADEL export bundle {"orgs":[…]}
  import             import a bundle into an instance
  keys rotate        rotate the token signing key now
  admin-pat          print where the bootstrap admin's token is, or issue a new one (--new)

export, import and keys rotate work either against a running server:
  --url URL          the server (env SESAME_URL), e.g. http://localhost:8080
  --pat-file FILE    a file holding an IAM_OWNER token, e.g. data/admin.pat (env SESAME_PAT_FILE,
                     or the token itself in SESAME_PAT)
or offline, on a data dir that no running server holds:
  --data-dir DIR     the server's data dir (env SESAME_DATA_DIR); server settings such as --master-key
                     (SESAME_MASTERKEY) and --issuer (SESAME_ISSUER) apply as to sesame start

  -h, --help         this text; sesame <command> --help for a command's options

Exit codes: 0 done, 1 failed, 2 usage or settings (e.g. a data dir a server holds).
`;

const TARGET_HELP = `Target (one of):
  --url URL             a running server (env SESAME_URL), with --pat-file FILE (env SESAME_PAT_FILE)
                        or the token itself in env SESAME_PAT (an IAM_OWNER token, e.g. data/admin.pat)
  --data-dir DIR        offline, on a data dir no server holds (env SESAME_DATA_DIR); the server's
                        settings apply (--master-key/SESAME_MASTERKEY, --issuer/SESAME_ISSUER, …)
`;

const HELP: Record<string, string> = {
  export: `Usage: sesame export (--url URL --pat-file FILE | --data-dir DIR) [options]

Writes ZITADEL's export bundle {"orgs":[…]} (POST /admin/v1/export).
  --out FILE            where to write the bundle; - for stdout (default -)
  --org-ids ID,…        only these organizations (repeatable)
  --excluded-org-ids ID,…  all but these organizations (repeatable)
  --with-passwords      include password hashes and client secret digests
  --with-otp            include TOTP secrets
  --timeout DURATION    give up after this long (default 60m)

${TARGET_HELP}`,
  import: `Usage: sesame import (--url URL --pat-file FILE | --data-dir DIR) --in FILE [options]

Imports a bundle {"orgs":[…]} (POST /admin/v1/import); prints what was imported and what was skipped.
  --in FILE             the bundle; - for stdin
  --v1                  the bundle is a ZITADEL v1 export (dataOrgsv1)
  --report FILE         also write the full import report (JSON) there
  --timeout DURATION    give up after this long (default 60m)

Offline on a new or empty data dir, the instance is created first, as at a server's first start.

${TARGET_HELP}`,
  keys: `Usage: sesame keys rotate (--url URL --pat-file FILE | --data-dir DIR)

Rotates the signing key now (POST /admin/v1/keys/_rotate): the next key (already published in the
JWKS) signs from now on, the old one stays published until what it signed has expired. Prints the
new key id.

${TARGET_HELP}`,
  'admin-pat': `Usage: sesame admin-pat [--data-dir DIR] [--new [--print]]

Prints the path of the bootstrap admin's personal access token file, <data dir>/admin.pat.
  --data-dir DIR        the data dir (env SESAME_DATA_DIR, default ./data)
  --new                 issue a new token for the bootstrap admin (offline: refused while a server
                        holds the data dir) and write it to <data dir>/admin.pat (mode 0600),
                        replacing the file; earlier tokens stay valid until removed
  --print               with --new: print the new token on stdout
`,
};

// ---- arguments ----

interface Parsed {
  values: Map<string, string[]>;
  flags: Set<string>;
  /** Options this command does not know: server settings for offline work (`--master-key x`). */
  rest: string[];
  positional: string[];
}

function parseArgs(argv: readonly string[], valued: readonly string[], booleans: readonly string[]): Parsed {
  const out: Parsed = { values: new Map(), flags: new Set(), rest: [], positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      out.flags.add('--help');
      continue;
    }
    if (!arg.startsWith('--') || arg === '-') {
      out.positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (booleans.includes(name)) {
      if (eq !== -1) throw usage(`option ${name} takes no value`);
      out.flags.add(name);
    } else if (valued.includes(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined) throw usage(`option ${name} needs a value`);
      out.values.set(name, [...(out.values.get(name) ?? []), value]);
    } else {
      // Every server setting takes a value: keep the pair for loadConfig, which checks it.
      out.rest.push(arg);
      if (eq === -1 && i + 1 < argv.length) out.rest.push(argv[++i]!);
    }
  }
  return out;
}

const last = (p: Parsed, name: string) => p.values.get(name)?.at(-1);
const envValue = (name: string) => (process.env[name] === '' ? undefined : process.env[name]);

// ---- where a command works: a running server or a data dir ----

type Target = { kind: 'online'; url: URL; token: string } | { kind: 'offline'; config: Config; signingAlgSet: boolean };

const TARGET_OPTIONS = ['--url', '--pat-file', '--data-dir'];

function target(p: Parsed, forceOffline = false): Target {
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

async function withDataDir<T>(
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

// ---- progress on stderr ----

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** A one-line progress indication, redrawn in place, only when stderr is a terminal. */
class Progress {
  private readonly tty = process.stderr.isTTY === true;
  private lastDraw = 0;
  private drawn = false;

  constructor(private readonly label: string) {}

  update(text: string): void {
    if (!this.tty) return;
    const now = Date.now();
    if (now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const line = `sesame: ${this.label} ${text}`.slice(0, Math.max(20, (process.stderr.columns ?? 80) - 1));
    process.stderr.write(`\r\x1b[K${line}`);
    this.drawn = true;
  }

  bytes(done: number, total?: number): void {
    this.update(total ? `${formatBytes(done)} of ${formatBytes(total)} (${Math.floor((done / total) * 100)}%)` : formatBytes(done));
  }

  /** Clears the line before the summary. */
  done(): void {
    if (this.drawn) process.stderr.write('\r\x1b[K');
    this.drawn = false;
  }
}

// ---- HTTP to a running server ----

interface HttpResult {
  status: number;
  body: Buffer;
}

/** POSTs JSON to the server; `upload`/`download` report bytes sent and received. */
function post(t: Extract<Target, { kind: 'online' }>, path: string, chunks: Buffer[], progress?: Progress): Promise<HttpResult> {
  const url = new URL(path, t.url);
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<HttpResult>((resolvePromise, reject) => {
    const req = send(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Length': length, Authorization: `Bearer ${t.token}`, Accept: 'application/json' },
    });
    req.on('error', (error: NodeJS.ErrnoException) => reject(failure(`cannot reach ${t.url.origin}: ${error.code ?? error.message}`)));
    req.on('response', (res: IncomingMessage) => {
      const total = Number(res.headers['content-length']) || undefined;
      const parts: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        parts.push(chunk);
        received += chunk.length;
        progress?.bytes(received, total);
      });
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      res.on('error', (error) => reject(failure(`${t.url.origin}: ${error.message}`)));
    });
    // Upload in pieces, waiting for the socket, so large bundles show progress and stay bounded.
    void (async () => {
      let sent = 0;
      const PIECE = 1024 * 1024;
      for (const chunk of chunks) {
        for (let at = 0; at < chunk.length; at += PIECE) {
          const piece = chunk.subarray(at, at + PIECE);
          sent += piece.length;
          if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
          progress?.bytes(sent, length);
          if (req.destroyed) return;
        }
      }
      req.end();
    })();
  });
}

/** The server's answer as a CliError: status and ZITADEL's `message`. */
function httpFailure(t: Extract<Target, { kind: 'online' }>, path: string, result: HttpResult): CliError {
  let message = result.body.toString('utf8').slice(0, 500).trim();
  try {
    const parsed = JSON.parse(result.body.toString('utf8')) as { message?: string };
    if (typeof parsed.message === 'string') message = parsed.message;
  } catch {
    /* not JSON */
  }
  const hint = result.status === 401 ? ' (check --pat-file / SESAME_PAT)' : result.status === 403 ? ' (the token must belong to an instance owner, IAM_OWNER)' : '';
  return failure(`${new URL(path, t.url).href}: HTTP ${result.status}: ${message || 'no message'}${hint}`);
}

// ---- files ----

async function readInput(path: string, progress: Progress): Promise<Buffer> {
  const stream = path === '-' ? process.stdin : createReadStream(path);
  let total: number | undefined;
  if (path !== '-') {
    try {
      total = fileSize(path);
    } catch (error) {
      throw usage(`--in ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
    }
  }
  const parts: Buffer[] = [];
  let read = 0;
  try {
    for await (const chunk of stream) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      parts.push(buf);
      read += buf.length;
      progress.bytes(read, total);
    }
  } catch (error) {
    throw failure(`--in ${path}: ${(error as Error).message}`);
  }
  return Buffer.concat(parts);
}

function fileSize(path: string): number {
  const stat = statSync(path);
  if (stat.isDirectory()) throw new Error('is a directory');
  return stat.size;
}

/**
 * Writes a file whole: to a temporary file beside it, then renamed over it. Mode 0600 by default:
 * bundles carry password hashes and TOTP secrets, reports name every user.
 */
function writeFileAtomic(path: string, data: Buffer | string, mode = 0o600): void {
  const temp = join(dirname(path), `.${Date.now().toString(36)}-${process.pid}.tmp`);
  try {
    writeFileSync(temp, data, { mode, flag: 'wx' });
    renameSync(temp, path);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      /* not created */
    }
    throw error;
  }
}

async function writeOutput(path: string, data: Buffer, progress: Progress): Promise<void> {
  if (path === '-') {
    const PIECE = 1024 * 1024;
    for (let at = 0; at < data.length; at += PIECE) {
      if (!process.stdout.write(data.subarray(at, at + PIECE))) await new Promise((r) => process.stdout.once('drain', r));
      progress.bytes(Math.min(at + PIECE, data.length), data.length);
    }
    return;
  }
  try {
    writeFileAtomic(path, data);
  } catch (error) {
    throw failure(`--out ${path}: ${(error as Error).message}`);
  }
}

// ---- summaries ----

/** Per kind: its list in a bundle, its list in an import report, and its name. */
const KINDS: [string, string, string, string][] = [
  ['humanUsers', 'humanUserIds', 'human user', 'human users'],
  ['machineUsers', 'machineUserIds', 'machine user', 'machine users'],
  ['projects', 'projectIds', 'project', 'projects'],
  ['projectRoles', 'projectRoles', 'project role', 'project roles'],
  ['oidcApps', 'oidcAppIds', 'OIDC app', 'OIDC apps'],
  ['apiApps', 'apiAppIds', 'API app', 'API apps'],
  ['userGrants', 'userGrants', 'user grant', 'user grants'],
  ['orgMembers', 'orgMembers', 'org member', 'org members'],
  ['projectMembers', 'projectMembers', 'project member', 'project members'],
  ['userMetadata', 'userMetadata', 'metadata entry', 'metadata entries'],
  ['domains', 'domains', 'domain', 'domains'],
  ['appKeys', 'appKeys', 'app key', 'app keys'],
  ['machineKeys', 'machineKeys', 'machine key', 'machine keys'],
];

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function describeCounts(orgs: number, counts: Map<string, number>): string {
  const parts = KINDS.filter(([k]) => (counts.get(k) ?? 0) > 0).map(([k, , one, many]) => plural(counts.get(k)!, one, many));
  return `${plural(orgs, 'organization', 'organizations')}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

/** What a bundle holds, per kind, read with the lazy scanner (no object graph). */
function bundleCounts(bundle: Buffer): { orgs: number; counts: Map<string, number> } {
  const scanner = new JsonScanner(bundle);
  const counts = new Map<string, number>();
  let orgs = 0;
  const orgList = camelMembers(scanner, scanner.document()).get('orgs');
  if (!orgList || scanner.kind(orgList) !== 'array') return { orgs, counts };
  for (const org of scanner.elements(orgList)) {
    orgs++;
    if (scanner.kind(org) !== 'object') continue;
    for (const [name, span] of camelMembers(scanner, org)) {
      if (scanner.kind(span) !== 'array') continue;
      let n = 0;
      for (const _ of scanner.elements(span)) n++;
      counts.set(name, (counts.get(name) ?? 0) + n);
    }
  }
  return { orgs, counts };
}

interface ReportJson {
  errors: { type: string; id: string; message: string }[];
  success: { orgs: Record<string, unknown>[] };
}

function printImportReport(report: ReportJson, where: string): void {
  const counts = new Map<string, number>();
  for (const org of report.success.orgs) {
    for (const [kind, reportKey] of KINDS) {
      const list = org[reportKey];
      if (Array.isArray(list)) counts.set(kind, (counts.get(kind) ?? 0) + list.length);
    }
  }
  const skipped = report.errors.length;
  process.stderr.write(
    `sesame: import: imported ${describeCounts(report.success.orgs.length, counts)} into ${where}; ${skipped === 0 ? 'nothing skipped' : `${plural(skipped, 'item', 'items')} skipped or failed:`}\n`,
  );
  if (skipped === 0) return;
  const byType = new Map<string, number>();
  for (const e of report.errors) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
  process.stderr.write(`  per kind: ${[...byType].map(([type, n]) => `${type} ${n}`).join(', ')}\n`);
  for (const e of report.errors) process.stderr.write(`  ${e.type} ${e.id}: ${e.message}\n`);
}

// ---- commands ----

function listOption(p: Parsed, name: string): string[] {
  return (p.values.get(name) ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
}

async function exportCommand(argv: string[]): Promise<void> {
  const p = parseArgs(argv, [...TARGET_OPTIONS, '--out', '--org-ids', '--excluded-org-ids', '--timeout'], ['--with-passwords', '--with-otp']);
  if (p.flags.has('--help')) return void process.stdout.write(HELP.export!);
  if (p.positional.length) throw usage(`unexpected argument ${p.positional[0]} (see sesame export --help)`);
  const out = last(p, '--out') ?? '-';
  const request = {
    orgIds: listOption(p, '--org-ids'),
    excludedOrgIds: listOption(p, '--excluded-org-ids'),
    withPasswords: p.flags.has('--with-passwords'),
    withOtp: p.flags.has('--with-otp'),
    timeout: last(p, '--timeout') ?? '60m',
    responseOutput: true,
  };
  const t = target(p);
  const progress = new Progress('export:');
  let bundle: Buffer;
  let from: string;
  if (t.kind === 'online') {
    from = t.url.origin;
    const result = await post(t, '/admin/v1/export', [Buffer.from(JSON.stringify(request))], progress);
    progress.done();
    if (result.status !== 200) throw httpFailure(t, '/admin/v1/export', result);
    bundle = result.body;
  } else {
    from = t.config.dataDir;
    bundle = await withDataDir(t, false, async (dir) => {
      const input = validate(exportRequestSchema, request);
      const { bundle: bytes } = await exportData(dir.migration, input, (records) => progress.update(`${records} records read`));
      return bytes;
    });
    progress.done();
  }
  await writeOutput(out, bundle, progress);
  progress.done();
  const { orgs, counts } = bundleCounts(bundle);
  const secrets = [request.withPasswords && 'passwords', request.withOtp && 'OTP secrets'].filter(Boolean).join(' and ');
  process.stderr.write(
    `sesame: export: exported ${describeCounts(orgs, counts)} from ${from}${secrets ? ` with ${secrets}` : ''}, ${formatBytes(bundle.length)} to ${out === '-' ? 'stdout' : resolve(out)}\n`,
  );
}

async function importCommand(argv: string[]): Promise<void> {
  const p = parseArgs(argv, [...TARGET_OPTIONS, '--in', '--report', '--timeout'], ['--v1']);
  if (p.flags.has('--help')) return void process.stdout.write(HELP.import!);
  if (p.positional.length) throw usage(`unexpected argument ${p.positional[0]} (see sesame import --help)`);
  const input = last(p, '--in');
  if (input === undefined) throw usage('--in FILE is required (- for stdin)');
  const timeout = last(p, '--timeout') ?? '60m';
  const t = target(p);
  const progress = new Progress('import: read');
  const bundle = await readInput(input, progress);
  progress.done();
  // Checked here (UTF-8, JSON), so a bad file is named with its own byte offsets and nothing is touched.
  const what = input === '-' ? 'stdin' : input;
  if (new JsonScanner(bundle).skipWs(0) >= bundle.length) throw usage(`--in ${what}: the bundle is empty`);
  try {
    scanDocument(bundle, what);
  } catch (error) {
    if (error instanceof ApiError) throw usage(`--in ${error.message}`);
    throw error;
  }
  // The import request of the API, whichever way it goes: {"timeout":…,"dataOrgs":<bundle>}.
  const field = p.flags.has('--v1') ? 'dataOrgsv1' : 'dataOrgs';
  const chunks = [Buffer.from(`{"timeout":${JSON.stringify(timeout)},"${field}":`), bundle, Buffer.from('}')];
  let report: ReportJson;
  let where: string;
  if (t.kind === 'online') {
    where = t.url.origin;
    const upload = new Progress('import: sent');
    const result = await post(t, '/admin/v1/import', chunks, upload);
    upload.done();
    if (result.status !== 200) throw httpFailure(t, '/admin/v1/import', result);
    report = JSON.parse(result.body.toString('utf8')) as ReportJson;
  } else {
    where = t.config.dataDir;
    report = await withDataDir(t, true, async (dir) => {
      if (dir.created) process.stderr.write(`sesame: import: ${dir.dataDir} was empty: created the instance (its admin token is in ${join(dir.dataDir, 'admin.pat')})\n`);
      const request = parseImportRequest(Buffer.concat(chunks));
      return (await importData(dir.migration, request)).toJSON() as unknown as ReportJson;
    });
  }
  const reportPath = last(p, '--report');
  if (reportPath !== undefined) {
    try {
      writeFileAtomic(reportPath, JSON.stringify(report, null, 2) + '\n');
    } catch (error) {
      throw failure(`--report ${reportPath}: ${(error as Error).message}`);
    }
  }
  printImportReport(report, where);
}

async function keysCommand(argv: string[]): Promise<void> {
  const p = parseArgs(argv, TARGET_OPTIONS, []);
  if (p.flags.has('--help') || p.positional.length === 0) {
    if (p.flags.has('--help')) return void process.stdout.write(HELP.keys!);
    throw usage('which action? sesame keys rotate (see sesame keys --help)');
  }
  if (p.positional[0] !== 'rotate' || p.positional.length > 1) throw usage(`unknown action ${p.positional.join(' ')} (only: rotate)`);
  const t = target(p);
  let kid: string;
  if (t.kind === 'online') {
    const result = await post(t, '/admin/v1/keys/_rotate', [Buffer.from('{}')]);
    if (result.status !== 200) throw httpFailure(t, '/admin/v1/keys/_rotate', result);
    kid = (JSON.parse(result.body.toString('utf8')) as { kid: string }).kid;
  } else {
    kid = await withDataDir(t, false, async (dir) => (await dir.keys.rotate()).kid);
  }
  process.stdout.write(`${kid}\n`);
  process.stderr.write(`sesame: keys rotate: key ${kid} signs from now on (${t.kind === 'online' ? t.url.origin : t.config.dataDir})\n`);
}

async function adminPatCommand(argv: string[]): Promise<void> {
  const p = parseArgs(argv, ['--data-dir'], ['--new', '--print']);
  if (p.flags.has('--help')) return void process.stdout.write(HELP['admin-pat']!);
  if (p.positional.length) throw usage(`unexpected argument ${p.positional[0]} (see sesame admin-pat --help)`);
  if (p.flags.has('--print') && !p.flags.has('--new')) throw usage('--print goes with --new (the token file is not printed: read it yourself)');
  if (!p.flags.has('--new')) {
    if (p.rest.length) throw usage(`unknown option ${p.rest[0]} (see sesame admin-pat --help)`);
    const dataDir = resolve(last(p, '--data-dir') ?? envValue('SESAME_DATA_DIR') ?? './data');
    const path = join(dataDir, 'admin.pat');
    if (!existsSync(path)) throw failure(`${path}: no such file (start a server on ${dataDir} once, or issue one with sesame admin-pat --new)`);
    process.stdout.write(`${path}\n`);
    return;
  }
  // Offline always: the token is issued in the data dir, which no server may hold meanwhile.
  if (last(p, '--data-dir') === undefined && envValue('SESAME_DATA_DIR') === undefined) p.values.set('--data-dir', ['./data']);
  const t = target(p, true) as Extract<Target, { kind: 'offline' }>;
  const { path, replaced, token } = await withDataDir(t, false, async (dir) => {
    const admin = dir.orgs.getUser(dir.instance.adminUserId);
    if (!admin) throw failure(`the bootstrap admin (user ${dir.instance.adminUserId}) no longer exists in ${dir.dataDir}`);
    const { token } = await dir.orgs.addPat(admin.id);
    const path = join(dir.dataDir, 'admin.pat');
    const replaced = existsSync(path);
    writeFileAtomic(path, token + '\n', 0o600);
    return { path, replaced, token };
  }, 'stop it first (a new token is issued offline only)');
  process.stderr.write(
    `sesame: admin-pat: issued a new token for the bootstrap admin; ${replaced ? 'replaced' : 'wrote'} ${path} (mode 0600). Earlier tokens stay valid until removed (DELETE /management/v1/users/<id>/pats/<id>)\n`,
  );
  process.stdout.write(p.flags.has('--print') ? `${token}\n` : `${path}\n`);
}

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
    case 'start':
      return serve(rest, 'sesame start [options]');
    case 'export':
      return exportCommand(rest);
    case 'import':
      return importCommand(rest);
    case 'keys':
      return keysCommand(rest);
    case 'admin-pat':
      return adminPatCommand(rest);
    default:
      throw usage(`unknown command ${command} (commands: start, export, import, keys rotate, admin-pat; see sesame --help)`);
  }
}

const argv = process.argv.slice(2);
const command = argv[0];
main(argv).then(
  () => {
    // Offline work leaves nothing running; a server keeps the process alive on its own.
  },
  (error: unknown) => {
    if (command === 'start') return startFailed(error);
    if (error instanceof CliError) {
      if (error.message) process.stderr.write(`sesame: ${['export', 'import', 'keys', 'admin-pat'].includes(command ?? '') ? `${command === 'keys' ? 'keys rotate' : command}: ` : ''}${error.message}\n`);
      process.exit(error.exitCode);
    }
    process.stderr.write(`sesame: ${command ?? ''}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
