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
  it('DPoP: on by default without nonces; nonces need the feature', () => {
    expect(loadConfig({}, [])).toMatchObject({ featureDpop: true, dpopRequireNonce: false });
    expect(loadConfig({ SESAME_DPOP_REQUIRE_NONCE: 'true' }, [])).toMatchObject({ featureDpop: true, dpopRequireNonce: true });
    expect(loadConfig({}, ['--feature-dpop', 'false'])).toMatchObject({ featureDpop: false });
    expect(() => loadConfig({ SESAME_FEATURE_DPOP: 'false', SESAME_DPOP_REQUIRE_NONCE: 'true' }, [])).toThrow(/SESAME_DPOP_REQUIRE_NONCE .*SESAME_FEATURE_DPOP/);
    expect(() => loadConfig({ SESAME_FEATURE_DPOP: 'maybe' }, [])).toThrow(/SESAME_FEATURE_DPOP/);
  });
  it('strips a trailing slash from the issuer', () => {
    expect(loadConfig({ SESAME_ISSUER: 'https://id.example.com/' }, []).issuer).toBe('https://id.example.com');
  });
});

describe('metrics settings', () => {
  const TOKEN = 'a-scraper-token-of-some-length';
  it('are off by default, on a loopback port of their own when set', () => {
    const off = loadConfig({}, []);
    expect(off.metricsPort).toBeUndefined();
    const on = loadConfig({ SESAME_METRICS_PORT: '9464' }, []);
    expect(on).toMatchObject({ metricsPort: 9464, metricsHost: '127.0.0.1', metricsToken: undefined });
    expect(loadConfig({}, ['--metrics-port', '0', '--metrics-host', '0.0.0.0', '--metrics-token', TOKEN])).toMatchObject({ metricsPort: 0, metricsHost: '0.0.0.0', metricsToken: TOKEN });
    expect(loadConfig({ SESAME_METRICS_PORT: '9464', SESAME_METRICS_HOST: '::1' }, []).metricsHost).toBe('::1');
  });
  it('refuse what would serve metrics by accident or do nothing, naming the setting', () => {
    // Beyond loopback only with a token.
    expect(() => loadConfig({ SESAME_METRICS_PORT: '9464', SESAME_METRICS_HOST: '0.0.0.0' }, [])).toThrow(/SESAME_METRICS_HOST \(--metrics-host\) = "0.0.0.0".*SESAME_METRICS_TOKEN/);
    // A token or host without a port would protect nothing.
    expect(() => loadConfig({ SESAME_METRICS_TOKEN: TOKEN }, [])).toThrow(/SESAME_METRICS_TOKEN .* is set but SESAME_METRICS_PORT/);
    expect(() => loadConfig({ SESAME_METRICS_HOST: '10.0.0.1' }, [])).toThrow(/SESAME_METRICS_HOST .* is set but SESAME_METRICS_PORT/);
    expect(() => loadConfig({ SESAME_PORT: '8080', SESAME_METRICS_PORT: '8080' }, [])).toThrow(/SESAME_METRICS_PORT.*port of its own/);
    expect(() => loadConfig({ SESAME_METRICS_PORT: '9464', SESAME_METRICS_TOKEN: 'short' }, [])).toThrow(/SESAME_METRICS_TOKEN/);
    expect(() => loadConfig({ SESAME_METRICS_PORT: 'metrics' }, [])).toThrow(/SESAME_METRICS_PORT/);
  });
});

describe('tracing settings (the standard OpenTelemetry variables)', () => {
  it('are off without an OTLP endpoint or with the SDK disabled', () => {
    expect(loadConfig({}, []).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, []).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, []).tracing).toBeUndefined();
  });
  it('send traces under /v1/traces of the endpoint, or to the traces endpoint as given, over http/protobuf unless http/json is set', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, []).tracing).toEqual({ endpoint: 'http://collector:4318/v1/traces', protocol: 'http/protobuf' });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example.com/custom/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, []).tracing).toEqual({
      endpoint: 'https://otel.example.com/custom/traces',
      protocol: 'http/json',
    });
  });
  it('refuse an endpoint or protocol Sesame cannot export to, naming the variable', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' }, [])).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, [])).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL = "grpc"/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }, [])).toThrow(/OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/);
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
