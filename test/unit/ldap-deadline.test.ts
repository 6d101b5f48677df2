import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ldapSignIn } from '../../src/services/federation/ldap.js';
import type { IdentityProvider } from '../../src/model/records.js';

/**
 * An LDAP sign-in ends when its time is up, its connections with it: a directory that says yes to
 * StartTLS and then never shakes hands (ldapts puts no timer on that handshake) does not hold the
 * login page, nor a socket, beyond twice the provider's timeout.
 */
let server: Server;
let port: number;
const open = new Set<Socket>();

beforeAll(async () => {
  server = createServer((socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    // The first message is the StartTLS extended request: answered "success" with its message id, then silence.
    socket.once('data', (request: Buffer) => {
      const id = request.subarray(2, 4 + request[3]!);
      const body = Buffer.from([0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00]);
      const response = Buffer.concat([id, Buffer.from([0x78, body.length]), body]);
      socket.write(Buffer.concat([Buffer.from([0x30, response.length]), response]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  for (const socket of open) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const provider = (): IdentityProvider =>
  ({
    id: 'ldap-1',
    name: 'Stalling directory',
    kind: 'ldap',
    ldap: {
      servers: [`ldap://127.0.0.1:${port}`],
      startTls: true,
      baseDn: 'dc=example,dc=org',
      bindDn: 'cn=admin,dc=example,dc=org',
      userBase: 'dn',
      userObjectClasses: ['inetOrgPerson'],
      userFilters: ['uid'],
      timeoutMs: 1000,
      attributes: { idAttribute: 'uid' },
    },
  }) as unknown as IdentityProvider;

describe('an LDAP sign-in against a directory that stalls', () => {
  it('answers unavailable once its time is up, and leaves no connection open', async () => {
    const outcome = await ldapSignIn({ bindPassword: () => 'secret' }, provider(), 'lena', 'Directory-Pass-1', false);
    expect(outcome).toEqual({ result: 'unavailable', reason: 'the directory did not answer in time' });
    // The server sees the connection go once the sign-in gave up.
    await new Promise<void>((resolve) => {
      const check = () => (open.size === 0 ? resolve() : setTimeout(check, 10));
      check();
    });
    expect(open.size).toBe(0);
  });
});
