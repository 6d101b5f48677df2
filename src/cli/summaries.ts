import { JsonScanner } from '../services/migration/json-scan.js';
import { camelMembers } from '../services/migration/source.js';

/** Per kind: its list in a bundle, its list in an import report, and its name. */
export const KINDS: [string, string, string, string][] = [
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

export const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function describeCounts(orgs: number, counts: Map<string, number>): string {
  const parts = KINDS.filter(([k]) => (counts.get(k) ?? 0) > 0).map(([k, , one, many]) => plural(counts.get(k)!, one, many));
  return `${plural(orgs, 'organization', 'organizations')}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

/** What a bundle holds, per kind, read with the lazy scanner (no object graph). */
export function bundleCounts(bundle: Buffer): { orgs: number; counts: Map<string, number> } {
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

export interface ReportJson {
  errors: { type: string; id: string; message: string }[];
  success: { orgs: Record<string, unknown>[] };
}

export function printImportReport(report: ReportJson, where: string): void {
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
