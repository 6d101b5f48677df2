import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthCodesActor, type CodeGrant } from '../../src/actors/auth-codes.js';
import { AuthRequestsActor } from '../../src/actors/auth-requests.js';
import { BackchannelLogoutsActor } from '../../src/actors/backchannel-logouts.js';
import { DeviceAuthorizationsActor, TooManyDeviceAuthorizations } from '../../src/actors/device-authorizations.js';
import { IssuedTokensActor } from '../../src/actors/issued-tokens.js';
import { LoginSecurityActor } from '../../src/actors/login-security.js';
import { PushedRequestsActor } from '../../src/actors/pushed-requests.js';
import { RefreshTokensActor } from '../../src/actors/refresh-tokens.js';
import { ReplayGuardActor } from '../../src/actors/replay-guard.js';
import { UserSessionsActor } from '../../src/actors/user-sessions.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { DecidedElsewhere } from '../../src/model/errors.js';
import type { ValidatedAuthRequest } from '../../src/model/authorization.js';
import { DEVICE_FLOW_RULES } from '../../src/protocol/device-flow.js';
import type { ChangeFeed } from '../../src/storage/db.js';
import { openPostgresStore, POSTGRES_DEFAULTS } from '../../src/storage/postgres/connection.js';
import type { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { installClock } from '../../src/util/clock.js';
import { postgresCluster } from '../helpers/postgres.js';

/**
 * The flows' actors on PostgreSQL, two nodes (each its own pool and its own actors) on one
 * database: what must happen once happens once whichever node asks, and what one node wrote the
 * other reads at once. The same actors run on LMDB in the rest of the suite.
 */
const masterKey = MasterKey.fromSecret('flows-on-postgres');
let a: PostgresStore;
let b: PostgresStore;
let restoreClock: () => void;
const now = 1_800_000_000_000;

beforeAll(async () => {
  restoreClock = installClock({ now: () => now });
  const url = await (await postgresCluster()).database('flows');
  const settings = { url, ...POSTGRES_DEFAULTS };
  [a, b] = [await openPostgresStore(settings), await openPostgresStore(settings)];
});

afterAll(async () => {
  restoreClock();
  await a?.close();
  await b?.close();
});

const grant: CodeGrant = { grantId: 'grant-1', clientId: 'app', redirectUri: 'https://app/cb', scopes: ['openid'], audience: ['app'], userId: 'u1', sid: 's1', authTime: 1, amr: ['pwd'] };

describe('two nodes on one PostgreSQL database', () => {
  it('an authorization code issued on A is redeemed once, whichever of A and B redeems it first', async () => {
    const code = await new AuthCodesActor(a).issue(grant);
    const [onA, onB] = [await new AuthCodesActor(a).find(code), await new AuthCodesActor(b).find(code)];
    expect(onB?.grant).toMatchObject(grant);
    const outcomes = await Promise.allSettled([onA!.consume(), onB!.consume()]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(DecidedElsewhere);
    expect((await new AuthCodesActor(a).find(code))?.used).toBe(true);
  });

  it('a refresh token used on A and B at once rotates once; the other use is judged again as a retry within the grace window', async () => {
    // Both nodes read the family before either writes (a latch after each read, not the machine's
    // timing): the store decides which rotation lands.
    let reads = 0;
    let open: () => void = () => undefined;
    const bothRead = new Promise<void>((resolve) => (open = resolve));
    const readingTogether = (store: PostgresStore): PostgresStore =>
      new Proxy(store, {
        get(target, name) {
          const value = Reflect.get(target, name, target) as unknown;
          if (name !== 'get') return typeof value === 'function' ? value.bind(target) : value;
          return async (...args: Parameters<PostgresStore['get']>) => {
            const found = await target.get(...args);
            if (++reads === 2) open();
            await bothRead;
            return found;
          };
        },
      });
    const [onA, onB] = [a, b].map((store) => new RefreshTokensActor(readingTogether(store), masterKey, 3_600_000, 86_400_000, 5_000));
    const token = await new RefreshTokensActor(a, masterKey, 3_600_000, 86_400_000, 5_000).create('family-1', {
      clientId: 'app',
      userId: 'u1',
      sid: 's1',
      scopes: ['openid'],
      audience: ['app'],
      authTime: 1,
      amr: ['pwd'],
    });
    const [first, second] = await Promise.all([onA!.rotate(token), onB!.rotate(token)]);
    expect([first.status, second.status]).toEqual(['rotated', 'rotated']);
    if (first.status !== 'rotated' || second.status !== 'rotated') throw new Error('not rotated');
    const settled = await Promise.allSettled([first.committed, second.committed]);
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    const winner = settled[0]!.status === 'fulfilled' ? first : second;
    const loser = winner === first ? onB! : onA!;
    const again = await loser.rotate(token);
    expect(again.status).toBe('retried');
    if (again.status === 'retried') expect(again.token).toBe(winner.token);
  });

  it('a client bound of device authorizations holds across nodes, and an approved device code is redeemed once', async () => {
    const rules = { ...DEVICE_FLOW_RULES, maxRecordsPerClient: 3 };
    const [onA, onB] = [a, b].map((store) => new DeviceAuthorizationsActor(store, masterKey, rules));
    const starts = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => (i % 2 ? onA! : onB!).start({ clientId: 'tv', scopes: ['openid'], audienceProjects: [] }, now)));
    expect(starts.filter((s) => s.status === 'fulfilled')).toHaveLength(3);
    expect(starts.filter((s) => s.status === 'rejected').every((s) => (s as PromiseRejectedResult).reason instanceof TooManyDeviceAuthorizations)).toBe(true);
    const { deviceCode } = (starts.find((s) => s.status === 'fulfilled') as PromiseFulfilledResult<{ deviceCode: string }>).value;
    const pending = (await onB!.byDeviceCode(deviceCode))!;
    expect(await onB!.approve(pending, { grantId: 'g', userId: 'u1', sid: 's1', audience: ['tv'], authTime: 1, amr: ['pwd'] }, now)).toBe(true);
    const [viewA, viewB] = [(await onA!.byDeviceCode(deviceCode))!, (await onB!.byDeviceCode(deviceCode))!];
    const redemptions = [onA!.redeem(viewA), onB!.redeem(viewB)];
    const written = await Promise.allSettled(redemptions.map((r) => (r.redeemed ? r.written : Promise.reject(new Error('not approved')))));
    expect(written.filter((w) => w.status === 'fulfilled')).toHaveLength(1);
  });

  it('an assertion jti, a pushed request and a logout claim are each taken by one node', async () => {
    const guards = [new ReplayGuardActor(a), new ReplayGuardActor(b)];
    const firstUses = await Promise.all(Array.from({ length: 6 }, (_, i) => guards[i % 2]!.firstUse('jti-1', now / 1000 + 60, now / 1000)));
    expect(firstUses.filter(Boolean)).toHaveLength(1);

    const { requestUri } = await new PushedRequestsActor(a).push('app', new Map([['scope', ['openid']]]), now);
    const takes = await Promise.all([new PushedRequestsActor(a).take(requestUri, 'app', now), new PushedRequestsActor(b).take(requestUri, 'app', now)]);
    const removed = await Promise.allSettled(takes.map((t) => t!.removed));
    expect(removed.filter((r) => r.status === 'fulfilled')).toHaveLength(1);

    const feed: ChangeFeed = { version: () => 0, announce: () => undefined, after: async () => 0 };
    const outboxes = [new BackchannelLogoutsActor(a, feed), new BackchannelLogoutsActor(b, feed)];
    const logout = { clientId: 'app', sub: 'u1', sid: 's1' };
    const queued = await Promise.all(outboxes.map((o) => o.enqueue([logout], now)));
    expect(queued.flat()).toHaveLength(1);
    const claims = await Promise.all(outboxes.map((o) => o.claim('s1|app', now, now + 10_000)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await outboxes[1]!.due(now)).toEqual([]);
  });

  it('wrong TOTP codes on both nodes at once are counted to exactly the limit', async () => {
    const security = [new LoginSecurityActor(a, 3, 60_000), new LoginSecurityActor(b, 3, 60_000)];
    const attempts = await Promise.all(Array.from({ length: 10 }, (_, i) => security[i % 2]!.takeOtpAttempt('person-1', now)));
    expect(attempts.filter((at) => at !== undefined)).toHaveLength(3);
    expect(await security[0]!.otpBlocked('person-1', now)).toBe(true);
  });

  it("what one node writes the other reads at once: a session, its end, an opaque token and its grant's revocation, a sign-in step", async () => {
    const sessions = [new UserSessionsActor(a, 3_600_000), new UserSessionsActor(b, 3_600_000)];
    const session = await sessions[0]!.signIn('agent-1', 'u1', { passwordAt: 1 }, Math.floor(now / 1000));
    expect((await sessions[1]!.ofAgent('agent-1')).map((s) => s.id)).toEqual([session.id]);
    expect((await sessions[1]!.ofUser('u1')).map((s) => s.id)).toEqual([session.id]);
    await sessions[1]!.end([session]);
    expect(await sessions[0]!.get(session.id)).toBeUndefined();
    expect(await sessions[0]!.ofAgent('agent-1')).toEqual([]);

    const tokens = [new IssuedTokensActor(a), new IssuedTokensActor(b)];
    const seconds = Math.floor(now / 1000);
    const opaque = await tokens[0]!.issueOpaque({ jti: 'j', sub: 'u1', clientId: 'app', aud: ['app'], scope: 'openid', iat: seconds, exp: seconds + 600, grantId: 'grant-9' });
    expect(await tokens[1]!.findOpaque(opaque)).toMatchObject({ sub: 'u1' });
    await tokens[1]!.revokeGrant('grant-9', seconds + 600);
    expect(await tokens[0]!.findOpaque(opaque)).toBeUndefined();

    const requests = [new AuthRequestsActor(a, masterKey, 2), new AuthRequestsActor(b, masterKey, 2)];
    const request = { clientId: 'app', prompt: new Set(['login']) } as unknown as ValidatedAuthRequest;
    const created = await requests[0]!.create('agent-1', request, 'en', 'loginname', { address: '198.51.100.7' });
    const seen = (await requests[1]!.get(created.id, 'agent-1'))!;
    await requests[1]!.chooseUser(seen, 'ada', 'u1');
    expect(await requests[0]!.get(created.id, 'agent-1')).toMatchObject({ step: 'password', userId: 'u1', loginName: 'ada' });
    // The per-address bound, counted in the database: two more from the same address, on the other node, push the first out.
    await requests[1]!.create('agent-1', request, 'en', 'loginname', { address: '198.51.100.7' });
    await requests[1]!.create('agent-1', request, 'en', 'loginname', { address: '198.51.100.7' });
    expect(await requests[0]!.get(created.id, 'agent-1')).toBeUndefined();
  });
});
