import { OAuthError } from './errors.js';

/** Bounds on what one request may name: each resource costs a lookup and lands in every token. */
const MAX_RESOURCES_PER_REQUEST = 10;
const MAX_RESOURCE_URI_LENGTH = 2048;

/** What the rules read of the directory: the project a resource URI is registered on. */
export interface ResourceDirectory {
  projectOfResource(uri: string): { id: string; orgId: string; state: string } | undefined;
}

/**
 * Why a string cannot be a resource indicator (RFC 8707 §2: an absolute URI without a fragment),
 * or undefined when it can. Also the rule for the URIs a project registers.
 */
export function resourceUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_RESOURCE_URI_LENGTH) return `is longer than ${MAX_RESOURCE_URI_LENGTH} characters`;
  if (uri.includes('#')) return 'must not have a fragment';
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:[^\s]+$/.test(uri)) return 'must be an absolute URI';
  try {
    new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  return undefined;
}

/**
 * The `resource` values of a request, checked for shape (RFC 8707 §2) and deduplicated.
 *
 * Resource indicators (RFC 8707): a client names the resource servers a token is for with one or
 * more `resource` parameters, at the authorization, pushed authorization and token endpoints. A
 * resource is registered on a project (its `resourceUris`); the token's `aud` then carries the
 * resource URI (what the resource server compares, RFC 9068 §3) and the project id (what ZITADEL's
 * API apps of that project compare at introspection).
 */
export function parseResources(values: readonly string[]): string[] {
  if (values.length > MAX_RESOURCES_PER_REQUEST) throw new OAuthError('invalid_target', `at most ${MAX_RESOURCES_PER_REQUEST} resource parameters`);
  const resources: string[] = [];
  for (const uri of values) {
    const problem = resourceUriProblem(uri);
    if (problem) throw new OAuthError('invalid_target', `resource ${JSON.stringify(uri.slice(0, 100))} ${problem}`);
    if (!resources.includes(uri)) resources.push(uri);
  }
  return resources;
}

/**
 * The audience the resources add: each URI and the project it is registered on. A resource must be
 * registered on an active project of the client's organization (`clientOrgId`): a token for
 * another organization's API is not the client's to ask for.
 */
export function resourceAudience(resources: readonly string[], dir: ResourceDirectory, clientOrgId: string): string[] {
  const aud: string[] = [];
  for (const uri of resources) {
    const project = dir.projectOfResource(uri);
    if (project?.state !== 'PROJECT_STATE_ACTIVE') throw new OAuthError('invalid_target', `resource ${uri} is not registered`);
    if (project.orgId !== clientOrgId) throw new OAuthError('invalid_target', `resource ${uri} is not available to this client`);
    if (!aud.includes(uri)) aud.push(uri);
    if (!aud.includes(project.id)) aud.push(project.id);
  }
  return aud;
}

/**
 * The resources a token request asks for out of those its grant holds (RFC 8707 §2.2): all of
 * them when it names none, else the ones named, each of which the grant must hold.
 */
export function narrowResources(granted: readonly string[], requested: readonly string[]): readonly string[] {
  if (requested.length === 0) return granted;
  const outside = requested.filter((r) => !granted.includes(r));
  if (outside.length > 0) throw new OAuthError('invalid_target', `resource not part of the authorization: ${outside.join(' ')}`);
  return requested;
}
