import { describe, expect, it } from 'vitest';
import { narrowResources, parseResources, resourceAudience, resourceUriProblem } from '../../src/protocol/resource-indicators.js';
import { OAuthError } from '../../src/protocol/errors.js';

/** RFC 8707's rules as pure functions: the shape of a resource, the audience it gives, narrowing. */
const targetError = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    return error instanceof OAuthError ? `${error.error}: ${error.description}` : String(error);
  }
  return 'no error';
};

describe('resource indicators', () => {
  it('accept absolute URIs without fragments, each once', () => {
    expect(parseResources(['https://api.example.com/v1', 'urn:example:api', 'https://api.example.com/v1'])).toEqual(['https://api.example.com/v1', 'urn:example:api']);
    for (const bad of ['/relative', 'relative', 'https://api.example.com/#f', 'https://a b.example/', '', 'x'.repeat(2049)]) {
      expect(resourceUriProblem(bad), bad).toBeDefined();
    }
    expect(targetError(() => parseResources(['https://a.example/#x']))).toMatch(/^invalid_target: .*fragment/);
    expect(targetError(() => parseResources(Array.from({ length: 11 }, (_, i) => `urn:r:${i}`)))).toMatch(/^invalid_target: at most 10/);
  });

  it("give the URI and its project as audience, only for active projects of the client's org", () => {
    const projects: Record<string, { id: string; orgId: string; state: string }> = {
      'urn:a': { id: 'pa', orgId: 'o1', state: 'PROJECT_STATE_ACTIVE' },
      'urn:b': { id: 'pb', orgId: 'o2', state: 'PROJECT_STATE_ACTIVE' },
      'urn:c': { id: 'pc', orgId: 'o1', state: 'PROJECT_STATE_INACTIVE' },
      'urn:a2': { id: 'pa', orgId: 'o1', state: 'PROJECT_STATE_ACTIVE' },
    };
    const dir = { projectOfResource: (uri: string) => projects[uri] };
    expect(resourceAudience(['urn:a', 'urn:a2'], dir, 'o1')).toEqual(['urn:a', 'pa', 'urn:a2']);
    expect(targetError(() => resourceAudience(['urn:b'], dir, 'o1'))).toMatch(/^invalid_target: .*not available/);
    expect(targetError(() => resourceAudience(['urn:c'], dir, 'o1'))).toMatch(/^invalid_target: .*not registered/);
    expect(targetError(() => resourceAudience(['urn:z'], dir, 'o1'))).toMatch(/^invalid_target: .*not registered/);
  });

  it("narrow a grant's resources to those asked for, never beyond", () => {
    expect(narrowResources(['urn:a', 'urn:b'], [])).toEqual(['urn:a', 'urn:b']);
    expect(narrowResources(['urn:a', 'urn:b'], ['urn:b'])).toEqual(['urn:b']);
    expect(targetError(() => narrowResources(['urn:a'], ['urn:b']))).toMatch(/^invalid_target: /);
    expect(targetError(() => narrowResources([], ['urn:a']))).toMatch(/^invalid_target: /);
  });
});
