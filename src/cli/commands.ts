import { existsSync } from 'node:fs';
import { SYSTEM_USER } from '../model/activity.js';
import { join, resolve } from 'node:path';
import { validate } from '../zitadel/validation.js';
import { ApiError } from '../model/errors.js';
import { exportRequestSchema, parseImportRequest, parseTimeout } from '../services/migration/request.js';
import { exportData, importData } from '../services/migration/run.js';
import { JsonScanner } from '../services/migration/json-scan.js';
import { scanDocument } from '../services/migration/source.js';

import { usage, failure } from './errors.js';
import { HELP } from './help.js';
import { type Parsed, parseArgs, last, envValue } from './args.js';
import { type Target, TARGET_OPTIONS, target, withDataDir } from './target.js';
import { formatBytes, Progress } from './progress.js';
import { post, httpFailure } from './online.js';
import { readInput, writeFileAtomic, writeOutput } from './files.js';
import { describeCounts, bundleCounts, type ReportJson, printImportReport } from './summaries.js';

export function listOption(p: Parsed, name: string): string[] {
  return (p.values.get(name) ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** A bad --timeout is a usage error (exit 2), found before a server or data dir is touched. */
function checkTimeout(timeout: string): void {
  try {
    parseTimeout(timeout, true);
  } catch (error) {
    if (error instanceof ApiError) throw usage(`--timeout: ${error.message}`);
    throw error;
  }
}

/** `sesame export`, the first of the commands here (export, import, keys rotate, admin-pat). */
export async function exportCommand(argv: string[]): Promise<void> {
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
  checkTimeout(request.timeout);
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

export async function importCommand(argv: string[]): Promise<void> {
  const p = parseArgs(argv, [...TARGET_OPTIONS, '--in', '--report', '--timeout'], ['--v1', '--add-to-existing-orgs']);
  if (p.flags.has('--help')) return void process.stdout.write(HELP.import!);
  if (p.positional.length) throw usage(`unexpected argument ${p.positional[0]} (see sesame import --help)`);
  const input = last(p, '--in');
  if (input === undefined) throw usage('--in FILE is required (- for stdin)');
  const timeout = last(p, '--timeout') ?? '60m';
  checkTimeout(timeout);
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
  const addToExisting = p.flags.has('--add-to-existing-orgs') ? '"addToExistingOrgs":true,' : '';
  const chunks = [Buffer.from(`{"timeout":${JSON.stringify(timeout)},${addToExisting}"${field}":`), bundle, Buffer.from('}')];
  let report: ReportJson;
  let where: string;
  if (t.kind === 'online') {
    where = t.url.origin;
    const upload = new Progress('import: sent');
    const result = await post(t, '/admin/v1/import', chunks, upload);
    upload.done();
    if (result.status !== 200) throw httpFailure(t, '/admin/v1/import', result);
    // Protojson leaves empty lists out (no errors, or no org imported): the report has them all the same.
    const answer = JSON.parse(result.body.toString('utf8')) as Partial<ReportJson> & { success?: Partial<ReportJson['success']> };
    report = { errors: answer.errors ?? [], success: { orgs: answer.success?.orgs ?? [] } };
  } else {
    where = t.config.dataDir;
    report = await withDataDir(t, true, async (dir) => {
      if (dir.created) process.stderr.write(`sesame: import: ${dir.dataDir} was empty: created the instance (its admin token is in ${join(dir.dataDir, 'admin.pat')})\n`);
      const request = parseImportRequest(Buffer.concat(chunks));
      return (await importData(dir.migration, request, undefined, { userId: SYSTEM_USER, service: 'cli' })).toJSON() as unknown as ReportJson;
    });
  }
  const reportPath = last(p, '--report');
  if (reportPath !== undefined) {
    try {
      writeFileAtomic(reportPath, `${JSON.stringify(report, null, 2)}\n`);
    } catch (error) {
      throw failure(`--report ${reportPath}: ${(error as Error).message}`);
    }
  }
  printImportReport(report, where);
}

export async function keysCommand(argv: string[]): Promise<void> {
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
    kid = await withDataDir(t, false, async (dir) => (await dir.keys.rotate(false, { userId: SYSTEM_USER, service: 'cli' })).kid);
  }
  process.stdout.write(`${kid}\n`);
  process.stderr.write(`sesame: keys rotate: key ${kid} signs from now on (${t.kind === 'online' ? t.url.origin : t.config.dataDir})\n`);
}

export async function adminPatCommand(argv: string[]): Promise<void> {
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
  const { path, replaced, token } = await withDataDir(
    t,
    false,
    async (dir) => {
      const admin = dir.orgs.getUser(dir.instance.adminUserId);
      if (!admin) throw failure(`the bootstrap admin (user ${dir.instance.adminUserId}) no longer exists in ${dir.dataDir}`);
      const { token } = await dir.orgs.addPat(admin.id);
      const path = join(dir.dataDir, 'admin.pat');
      const replaced = existsSync(path);
      writeFileAtomic(path, `${token}\n`, 0o600);
      return { path, replaced, token };
    },
    'stop it first (a new token is issued offline only)',
  );
  process.stderr.write(
    `sesame: admin-pat: issued a new token for the bootstrap admin; ${replaced ? 'replaced' : 'wrote'} ${path} (mode 0600). Earlier tokens stay valid until removed (DELETE /management/v1/users/<id>/pats/<id>)\n`,
  );
  process.stdout.write(p.flags.has('--print') ? `${token}\n` : `${path}\n`);
}
