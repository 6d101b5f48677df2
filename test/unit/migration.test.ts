import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/model/errors.js';
import { Deadline } from '../../src/services/migration/deadline.js';
import { JsonScanner, JsonSyntaxError } from '../../src/services/migration/json-scan.js';
import { parseImportRequest, parseTimeout } from '../../src/services/migration/request.js';
import { bundleOrgs, camelInPlace, camelMembers, scanDocument } from '../../src/services/migration/source.js';
import { toCamel } from '../../src/zitadel/json.js';
import { convertV1Org } from '../../src/zitadel/v1.js';

/** The pure parts of migration: the lazy JSON reader, the request's rules, v1 conversion, deadlines. */
const valid = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};
const scans = (text: string) => {
  try {
    new JsonScanner(Buffer.from(text)).document();
    return true;
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return false;
  }
};

const apiError = (fn: () => unknown): ApiError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
};

describe('JSON scanner', () => {
  it('accepts exactly what JSON.parse accepts', () => {
    const samples = [
      '{}',
      '[]',
      ' {"a":1} ',
      '"x"',
      '-0.5e+10',
      '0',
      '01',
      '1.',
      '.5',
      '{"a":1,}',
      '[1,]',
      '{"a" 1}',
      '"\\u00e9"',
      '"\\x"',
      '"a\\\\"',
      'tru',
      '[',
      '{"a":"b"}x',
      '"\t"',
      '"ab\\"',
      '[[[]]]',
      '{"\\"":1}',
      '',
      '   ',
      '{"a":[true,false,null]}',
      '1e',
      '-',
      '"\\uD83D\\uDE00"',
      '"\\u12G4"',
    ];
    for (const s of samples) expect(scans(s), JSON.stringify(s)).toBe(valid(s));
  });

  it('agrees with JSON.parse on thousands of mutated documents', () => {
    const base = JSON.stringify({ orgs: [{ orgId: '1', humanUsers: [{ userId: 'a"b', user: { userName: 'x\\y', n: [1, 2.5, -3e2, true, null] } }] }] });
    const alphabet = '{}[]",:\\ 0123456789.eE+-truefalsnul';
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20000; i++) {
      const chars = base.split('');
      for (let k = 0; k <= i % 3; k++) {
        const at = Math.floor(random() * chars.length);
        const c = alphabet[Math.floor(random() * alphabet.length)]!;
        const op = random();
        if (op < 0.33) chars.splice(at, 1);
        else if (op < 0.66) chars.splice(at, 0, c);
        else chars[at] = c;
      }
      const text = chars.join('');
      expect(scans(text), text).toBe(valid(text));
    }
  });

  it('walks members and elements lazily, with byte offsets', () => {
    const buf = Buffer.from('{"a" : [1, {"b":2}, "x"], "c_d":null, "é":"ü"}');
    const scanner = new JsonScanner(buf);
    const root = scanner.document();
    const members = [...scanner.members(root)];
    expect(members.map((m) => m.key)).toEqual(['a', 'c_d', 'é']);
    expect([...scanner.elements(members[0]!.value)].map((s) => scanner.parse(s))).toEqual([1, { b: 2 }, 'x']);
    expect(scanner.kind(members[1]!.value)).toBe('null');
    expect(scanner.parse(members[2]!.value)).toBe('ü');
  });

  it('survives hostile nesting without exhausting the stack', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(() => new JsonScanner(Buffer.from(deep)).document()).toThrow(/nested deeper/);
  });

  it('camelCases parsed values like toCamel, keeping objects that need no change', () => {
    const samples = ['{"a":{"b":[1,{"c_d":null,"cD":2}]},"e_f":"x"}', '{"orgId":"1","user":{"userName":"u","idps":[]}}', '[{"a_b":1},{"__proto__":{"x":1}},null]', '{"x":null}'];
    for (const text of samples) expect(camelInPlace(JSON.parse(text))).toEqual(toCamel(JSON.parse(text)));
    const parsed = JSON.parse('{"user":{"userName":"u"}}');
    const user = parsed.user;
    expect((camelInPlace(parsed) as { user: unknown }).user).toBe(user);
  });

  it('walks a checked document without scanning its shallow containers again', () => {
    const text = JSON.stringify({ dataOrgs: { orgs: [{ orgId: 'a', humanUsers: [{ userId: 'u', user: { profile: { firstName: 'x' } } }] }] } });
    const { scanner, root } = scanDocument(Buffer.from(text), 'x');
    const orgs = bundleOrgs(scanner, camelMembers(scanner, root).get('dataOrgs')!, 'dataOrgs', false);
    const [span] = orgs[0]!.list('humanUsers');
    expect(orgs[0]!.element('humanUsers', span!)).toEqual({ userId: 'u', user: { profile: { firstName: 'x' } } });
  });

  it('prefers camelCase names over their snake_case twins', () => {
    const { scanner, root } = scanDocument(Buffer.from('{"org_id":"snake","orgId":"camel","data_orgsv1":1}'), 'x');
    const fields = camelMembers(scanner, root);
    expect(scanner.parse(fields.get('orgId')!)).toBe('camel');
    expect(fields.has('dataOrgsv1')).toBe(true);
    const reversed = scanDocument(Buffer.from('{"orgId":"camel","org_id":"snake"}'), 'x');
    expect(reversed.scanner.parse(camelMembers(reversed.scanner, reversed.root).get('orgId')!)).toBe('camel');
  });
});

describe('import request', () => {
  const body = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

  it('requires a valid timeout before anything else', () => {
    expect(apiError(() => parseImportRequest(body({ dataOrgs: { orgs: [] } }))).message).toMatch(/timeout is required/);
    expect(apiError(() => parseImportRequest(body({ timeout: 'soon', dataOrgs: { orgs: [] } }))).message).toMatch(/not a duration/);
    expect(apiError(() => parseImportRequest(body({ timeout: 30, dataOrgs: { orgs: [] } }))).kind).toBe('InvalidArgument');
    for (const t of ['30m', '1m30s', '30m0s', '10m', '1h', '0.5s']) expect(parseImportRequest(body({ timeout: t, dataOrgs: {} })).timeoutMs).toBeGreaterThan(0);
    expect(parseTimeout('1m30s', true)).toBe(90_000);
    expect(parseTimeout(undefined, false)).toBeUndefined();
  });

  it('rejects empty, truncated and non-object bodies', () => {
    expect(apiError(() => parseImportRequest(Buffer.alloc(0))).message).toMatch(/empty/);
    expect(apiError(() => parseImportRequest(body('  \n'))).message).toMatch(/empty/);
    expect(apiError(() => parseImportRequest(body('{"timeout":"1m","dataOrgs":{"orgs":[{"orgId":"1"'))).message).toMatch(/not valid JSON.*end of JSON input/);
    expect(apiError(() => parseImportRequest(body('[1]'))).message).toMatch(/JSON object/);
    expect(apiError(() => parseImportRequest(Buffer.from([0x7b, 0xff, 0x7d]))).message).toMatch(/UTF-8/);
  });

  it('takes exactly one data source', () => {
    expect(apiError(() => parseImportRequest(body({ timeout: '1m' }))).message).toMatch(/one of dataOrgs/);
    expect(apiError(() => parseImportRequest(body({ timeout: '1m', dataOrgs: {}, data_orgsv1: {} }))).message).toMatch(/only one/);
    expect(apiError(() => parseImportRequest(body({ timeout: '1m', dataOrgsLocal: { path: '/x' } }))).kind).toBe('Unimplemented');
    expect(apiError(() => parseImportRequest(body({ timeout: '1m', data_orgs_s3: { path: '/x' } }))).kind).toBe('Unimplemented');
    expect(parseImportRequest(body({ timeout: '1m', data_orgsv1: { orgs: [] }, dataOrgs: null })).data).toMatchObject({ kind: 'inline', v1: true });
    const gcs = parseImportRequest(body({ timeout: '1m', data_orgs_gcs: { bucket: 'b', path: 'p', serviceaccount_json: Buffer.from('{"client_email":"a","private_key":"k"}').toString('base64') } }));
    expect(gcs.data).toMatchObject({ kind: 'gcs', v1: false, location: { bucket: 'b', path: 'p' } });
    expect(apiError(() => parseImportRequest(body({ timeout: '1m', dataOrgsGcs: { bucket: 'b', path: 'p', serviceaccountJson: 'bm90IGpzb24=' } }))).message).toMatch(/service-account/);
    expect(apiError(() => parseImportRequest(body({ timeout: '1m', dataOrgsGcs: { bucket: '', path: 'p' } }))).message).toMatch(/bucket/);
  });

  it('reads the bundle org by org and rejects a malformed one', () => {
    const { scanner, root } = scanDocument(
      body({
        orgs: [
          { orgId: 'a', humanUsers: [{ userId: 'u1' }, { userId: 'u2' }] },
          { org_id: 'b', human_users: 'nope' },
        ],
      }),
      'x',
    );
    const orgs = bundleOrgs(scanner, root, 'dataOrgs', false);
    expect(orgs.map((o) => o.value('orgId'))).toEqual(['a', 'b']);
    expect(orgs[0]!.list('humanUsers').map((s) => orgs[0]!.element('humanUsers', s))).toEqual([{ userId: 'u1' }, { userId: 'u2' }]);
    expect(() => orgs[1]!.list('humanUsers')).toThrow(/must be a list/);
    const bad = (value: unknown) => {
      const doc = scanDocument(body(value), 'x');
      return apiError(() => bundleOrgs(doc.scanner, doc.root, 'dataOrgs', false)).message;
    };
    expect(bad([])).toMatch(/must be an object/);
    expect(bad({ orgs: {} })).toMatch(/orgs must be a list/);
    expect(bad({ orgs: [1] })).toMatch(/orgs\[0\] must be an object/);
  });
});

describe('v1 bundles', () => {
  it('converts iamPolicy, login-policy lists and trigger action enums', () => {
    const out = convertV1Org({
      orgId: '1',
      iamPolicy: { userLoginMustBeDomain: true },
      loginPolicy: { allowRegister: true, passwordCheckLifetime: '1s' },
      secondFactors: [{ type: 'SECOND_FACTOR_TYPE_OTP' }],
      multiFactors: [{ type: 'MULTI_FACTOR_TYPE_U2F_WITH_VERIFICATION' }],
      idps: [{ idpId: 'i', ownerType: 'IDP_OWNER_TYPE_ORG' }],
      triggerActions: [{ flowType: 'FLOW_TYPE_EXTERNAL_AUTHENTICATION', triggerType: 'TRIGGER_TYPE_PRE_CREATION', actionIds: ['a'] }],
    });
    expect(out.iamPolicy).toBeUndefined();
    expect(out.domainPolicy).toEqual({ userLoginMustBeDomain: true, validateOrgDomains: false, smtpSenderAddressMatchesInstanceDomain: false });
    expect(out.loginPolicy).toMatchObject({
      allowRegister: true,
      passwordCheckLifetime: '864000s',
      secondFactors: ['SECOND_FACTOR_TYPE_OTP'],
      multiFactors: ['MULTI_FACTOR_TYPE_U2F_WITH_VERIFICATION'],
    });
    expect(out.triggerActions).toEqual([{ flowType: '1', triggerType: '2', actionIds: ['a'] }]);
  });

  it('applies the same conversion when reading lazily', () => {
    const { scanner, root } = scanDocument(
      Buffer.from(
        JSON.stringify({
          orgs: [{ orgId: '1', iam_policy: { user_login_must_be_domain: true }, trigger_actions: [{ flow_type: 'FLOW_TYPE_EXTERNAL_AUTHENTICATION', trigger_type: 'TRIGGER_TYPE_POST_CREATION' }] }],
        }),
      ),
      'x',
    );
    const [org] = bundleOrgs(scanner, root, 'dataOrgsv1', true);
    expect(org!.value('domainPolicy')).toMatchObject({ userLoginMustBeDomain: true, validateOrgDomains: false });
    expect(org!.list('triggerActions').map((s) => org!.element('triggerActions', s))).toEqual([{ flowType: '1', triggerType: '3' }]);
  });
});

describe('deadline', () => {
  it('expires, reports progress and races promises', async () => {
    let now = 1000;
    const deadline = new Deadline(500, 'import', () => now);
    expect(() => deadline.check()).not.toThrow();
    now = 1500;
    const error = apiError(() => deadline.check('1 organization was imported before'));
    expect(error.kind).toBe('DeadlineExceeded');
    expect(error.message).toBe('the import ran out of time (timeout 0.5s): 1 organization was imported before');
    const short = new Deadline(20, 'export');
    await expect(short.race(new Promise(() => {}))).rejects.toMatchObject({ kind: 'DeadlineExceeded' });
    await expect(new Deadline(1000, 'export').race(Promise.resolve(7))).resolves.toBe(7);
  });
});
