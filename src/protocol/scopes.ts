import { OAuthError } from './errors.js';

/**
 * Scope rules (RFC 6749 §3.3 syntax; ZITADEL's reserved scopes, docs/compatibility.md §3.2). Pure functions.
 */
export const STANDARD_SCOPES = ['openid', 'profile', 'email', 'phone', 'address', 'offline_access'] as const;

const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const PROJECT_AUDIENCE = /^urn:zitadel:iam:org:project:id:([^:]+):aud$/;
const ORG_ID = /^urn:zitadel:iam:org:id:(.+)$/;
const ORG_DOMAIN = /^urn:zitadel:iam:org:domain:primary:(.+)$/;
const KEPT_PREFIXES = ['urn:zitadel:iam:org:project:role:', 'urn:zitadel:iam:org:roles:id:', 'urn:zitadel:iam:org:idp:id:'];
const KEPT_EXACT = new Set([...STANDARD_SCOPES, 'urn:zitadel:iam:org:projects:roles', 'urn:zitadel:iam:user:metadata', 'urn:zitadel:iam:user:resourceowner', 'urn:zitadel:iam:user:groups', 'groups']);

/** Splits a scope parameter; malformed scope tokens are `invalid_scope`. Duplicates collapse. */
export function parseScope(scope: string | undefined): string[] {
  if (scope === undefined) return [];
  const tokens = scope.split(' ').filter((s) => s.length > 0);
  for (const token of tokens) {
    if (!SCOPE_TOKEN.test(token)) throw new OAuthError('invalid_scope', 'scope contains invalid characters');
  }
  return [...new Set(tokens)];
}

/** What a scope token means to Sesame (ZITADEL's reserved scopes, docs/compatibility.md §3.2). */
export type ScopeKind = { kind: 'audience'; projectRef: string } | { kind: 'org'; by: 'id' | 'domain'; value: string } | { kind: 'known' } | { kind: 'unknown' };

export function classifyScope(scope: string): ScopeKind {
  const aud = PROJECT_AUDIENCE.exec(scope);
  if (aud) return { kind: 'audience', projectRef: aud[1]! };
  const byId = ORG_ID.exec(scope);
  if (byId) return { kind: 'org', by: 'id', value: byId[1]! };
  const byDomain = ORG_DOMAIN.exec(scope);
  if (byDomain) return { kind: 'org', by: 'domain', value: byDomain[1]! };
  return KEPT_EXACT.has(scope) || KEPT_PREFIXES.some((p) => scope.startsWith(p)) ? { kind: 'known' } : { kind: 'unknown' };
}

/** The project an `:aud` scope names; `invalid_scope` when there is none. */
export function audienceProject(scope: string, projectRef: string, resolveProject: (ref: string) => string | undefined): string {
  const projectId = resolveProject(projectRef);
  if (!projectId) throw new OAuthError('invalid_scope', `unknown project in scope ${scope}`);
  return projectId;
}

export interface ScopeContext {
  /** Resolves a project id of an `:aud` scope (`zitadel` → the management project), or undefined. */
  resolveProject(id: string): string | undefined;
  /** The org the token's subject belongs to, with its domains. */
  subjectOrg: { id: string; domains: readonly string[] };
}

export interface GrantedScope {
  scopes: string[];
  /** Project ids the `:aud` scopes add to the audience. */
  audience: string[];
}

/**
 * Grants the scopes of a token request for a subject (client_credentials, JWT profile): unknown
 * scopes are dropped, audience scopes must name existing projects, at most one org scope may be
 * given and it is dropped when it is not the subject's org.
 */
export function grantScopes(requested: readonly string[], ctx: ScopeContext, drop: ReadonlySet<string> = new Set()): GrantedScope {
  const scopes: string[] = [];
  const audience: string[] = [];
  let orgScopes = 0;
  for (const scope of requested) {
    if (drop.has(scope)) continue;
    const meaning = classifyScope(scope);
    switch (meaning.kind) {
      case 'audience': {
        const projectId = audienceProject(scope, meaning.projectRef, ctx.resolveProject);
        if (!audience.includes(projectId)) audience.push(projectId);
        scopes.push(scope);
        break;
      }
      case 'org': {
        if (++orgScopes > 1) throw new OAuthError('invalid_scope', 'Only one organization scope may be provided');
        const value = meaning.value.toLowerCase();
        const matches = meaning.by === 'id' ? value === ctx.subjectOrg.id.toLowerCase() : ctx.subjectOrg.domains.some((d) => d.toLowerCase() === value);
        if (matches) scopes.push(scope);
        break;
      }
      case 'known':
        scopes.push(scope);
        break;
      case 'unknown':
        break;
    }
  }
  return { scopes, audience };
}

/**
 * A self-registered client's `scope` (RFC 7591 §2) bounds every grant it uses: what it may ask for
 * at authorization, the device endpoint and token exchange (`openid` is the protocol's own). Other
 * apps have no bound.
 */
export function beyondRegisteredScope(bound: readonly string[] | undefined, scope: string): boolean {
  return bound !== undefined && scope !== 'openid' && !bound.includes(scope);
}
