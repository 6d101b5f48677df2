import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseDuration } from '../../src/util/duration.js';
import { hasPermission } from '../../src/domain/permissions.js';

describe('durations', () => {
  it('parses Go duration strings', () => {
    expect(parseDuration('12h')).toBe(43_200_000);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('30m0s')).toBe(1_800_000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('300ms')).toBe(300);
    expect(parseDuration('43200s')).toBe(43_200_000);
    expect(parseDuration('0')).toBe(0);
  });
  it('rejects what is not a duration', () => {
    for (const bad of ['', 'h', '12', '1x', '1h 2m', '-1s', 'abc']) expect(parseDuration(bad)).toBeUndefined();
  });
});

describe('configuration', () => {
  it('has defaults', () => {
    const c = loadConfig({}, []);
    expect(c.port).toBe(8080);
    expect(c.signingAlg).toBe('RS256');
    expect(c.accessTokenLifetime).toBe(12 * 3600 * 1000);
    expect(c.issuer).toBeUndefined();
    expect(c.workers).toBeGreaterThanOrEqual(1);
  });
  it('lets flags win over environment variables', () => {
    const c = loadConfig({ SESAME_PORT: '9000', SESAME_SIGNING_ALG: 'ES256' }, ['--port', '9100', '--signing-alg=EdDSA']);
    expect(c.port).toBe(9100);
    expect(c.signingAlg).toBe('EdDSA');
  });
  it('names the setting in errors', () => {
    expect(() => loadConfig({ SESAME_PORT: 'eighty' }, [])).toThrow(/SESAME_PORT/);
    expect(() => loadConfig({ SESAME_SIGNING_ALG: 'HS256' }, [])).toThrow(/SESAME_SIGNING_ALG/);
    expect(() => loadConfig({ SESAME_ACCESS_TOKEN_LIFETIME: 'forever' }, [])).toThrow(/SESAME_ACCESS_TOKEN_LIFETIME/);
    expect(() => loadConfig({ SESAME_ISSUER: 'ftp://x' }, [])).toThrow(/SESAME_ISSUER/);
    expect(() => loadConfig({ SESAME_MASTERKEY: 'short' }, [])).toThrow(/SESAME_MASTERKEY/);
    expect(() => loadConfig({}, ['--nope', '1'])).toThrow(ConfigError);
  });
  it('strips a trailing slash from the issuer', () => {
    expect(loadConfig({ SESAME_ISSUER: 'https://id.example.com/' }, []).issuer).toBe('https://id.example.com');
  });
});

describe('permissions', () => {
  const m = (scope: string, roles: string[]) => ({ id: `${scope}|u`, scope, userId: 'u', roles, createdAt: 0, changedAt: 0, sequence: 1 });
  it('applies instance roles everywhere and org roles to their org only', () => {
    expect(hasPermission([m('instance', ['IAM_OWNER'])], 'user.write', { orgId: 'x' })).toBe(true);
    expect(hasPermission([m('org:o1', ['ORG_OWNER'])], 'user.write', { orgId: 'o1' })).toBe(true);
    expect(hasPermission([m('org:o1', ['ORG_OWNER'])], 'user.write', { orgId: 'o2' })).toBe(false);
    expect(hasPermission([m('org:o1', ['ORG_OWNER'])], 'iam.write', {})).toBe(false);
    expect(hasPermission([m('instance', ['IAM_OWNER_VIEWER'])], 'user.write', { orgId: 'o1' })).toBe(false);
    expect(hasPermission([], 'org.read', { orgId: 'o1' })).toBe(false);
  });
});
