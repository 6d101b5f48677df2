import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'ldapts';
import { freePort } from './server.js';

/**
 * A real LDAP directory for the federation tests: Debian's OpenLDAP `slapd` (installed by the test
 * script, test/ensure-test-tools.sh), started here on a free port of 127.0.0.1 with a throwaway
 * configuration and database, as no system service: `dc=example,dc=org` with `ou=people`, its
 * administrator `cn=admin,dc=example,dc=org`, and the people a test adds.
 */
export const SLAPD = '/usr/sbin/slapd';
export const RUN_LDAP = existsSync(SLAPD) || process.env.CI === 'true';

export interface LdapPerson {
  uid: string;
  password: string;
  givenName: string;
  sn: string;
  mail: string;
}

export interface LdapServer {
  url: string;
  baseDn: string;
  adminDn: string;
  adminPassword: string;
  addPerson(person: LdapPerson): Promise<void>;
  close(): Promise<void>;
}

export async function startLdapServer(): Promise<LdapServer> {
  const dir = mkdtempSync(join(tmpdir(), 'sesame-slapd-'));
  mkdirSync(join(dir, 'data'));
  const port = await freePort();
  const adminPassword = 'admin-secret';
  const baseDn = 'dc=example,dc=org';
  const adminDn = `cn=admin,${baseDn}`;
  writeFileSync(
    join(dir, 'slapd.conf'),
    [
      'include /etc/ldap/schema/core.schema',
      'include /etc/ldap/schema/cosine.schema',
      'include /etc/ldap/schema/nis.schema',
      'include /etc/ldap/schema/inetorgperson.schema',
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      `pidfile ${join(dir, 'slapd.pid')}`,
      'database mdb',
      'maxsize 10485760',
      `suffix "${baseDn}"`,
      `rootdn "${adminDn}"`,
      `rootpw ${adminPassword}`,
      `directory ${join(dir, 'data')}`,
      // People read their own entry and bind with their password; the administrator reads everything.
      'access to attrs=userPassword by self write by anonymous auth by * none',
      'access to * by * read',
      '',
    ].join('\n'),
  );
  const url = `ldap://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(SLAPD, ['-f', join(dir, 'slapd.conf'), '-h', `${url}/`, '-d', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const admin = async <T>(work: (client: Client) => Promise<T>): Promise<T> => {
    const client = new Client({ url, timeout: 5000, connectTimeout: 5000 });
    try {
      await client.bind(adminDn, adminPassword);
      return await work(client);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  };
  // Ready once it takes a bind.
  for (let tries = 0; ; tries++) {
    try {
      await admin(async () => undefined);
      break;
    } catch (error) {
      if (tries > 100 || child.exitCode !== null) throw new Error(`slapd did not start: ${String(error)}\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  await admin(async (client) => {
    await client.add(baseDn, { objectClass: ['top', 'dcObject', 'organization'], o: 'Example', dc: 'example' });
    await client.add(`ou=people,${baseDn}`, { objectClass: ['top', 'organizationalUnit'], ou: 'people' });
  });
  return {
    url,
    baseDn,
    adminDn,
    adminPassword,
    addPerson: (p) =>
      admin(async (client) => {
        await client.add(`uid=${p.uid},ou=people,${baseDn}`, {
          objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson'],
          uid: p.uid,
          cn: `${p.givenName} ${p.sn}`,
          givenName: p.givenName,
          sn: p.sn,
          mail: p.mail,
          userPassword: p.password,
        });
      }),
    async close() {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
