import { connect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { AndFilter, Client, EqualityFilter, InvalidCredentialsError, OrFilter, type Entry } from 'ldapts';
import { isInternalHost, publicOnlyLookup } from '../../util/public-address.js';
import type { IdentityProvidersReader } from '../../actors/identity-providers.js';
import type { IdentityProvider, LdapSettings } from '../../model/records.js';
import type { ExternalIdentity } from '../../model/external-identity.js';
import type { View } from '../../util/readonly.js';

/**
 * A sign-in at an LDAP directory (ZITADEL's LDAP provider), with ldapts: Sesame binds with the
 * provider's service account, finds the one entry of the configured object classes whose filter
 * attributes (`uid`, `mail`, …) equal the name typed, then binds as that entry with the password
 * typed (the directory decides it; an empty password is refused before, since an LDAP bind without
 * one is anonymous and succeeds). Filters are built as objects, so the name typed is a value,
 * never filter syntax. The entry's attributes become the external identity (its `idAttribute` the
 * link's key). Servers are tried in order while they cannot be reached; the whole sign-in ends
 * after twice the provider's timeout (at most a minute), its connections with it.
 */
export type LdapOutcome = { result: 'ok'; identity: ExternalIdentity } | { result: 'wrong' } | { result: 'unavailable'; reason: string };

const first = (entry: Entry, attribute: string | undefined): string => {
  if (!attribute) return '';
  const value = entry[attribute];
  const one = Array.isArray(value) ? value[0] : value;
  return one === undefined ? '' : Buffer.isBuffer(one) ? one.toString('utf8') : String(one);
};

/** What one sign-in may read from the directories it asks (an entry of a person, with the mapped attributes only). */
const MAX_READ = 1024 * 1024;

/** The longest one sign-in may take, whatever the provider's timeout (which bounds each operation). */
const MOST_SIGN_IN_MS = 60_000;

/**
 * The connections of one sign-in (ldapts's createConnection and createSecureConnection): to public
 * addresses only for an org's provider (the name judged as it is resolved, publicOnlyLookup), at
 * most MAX_READ bytes read, and every one destroyed when the sign-in ends or its time is up (ldapts
 * has no timer on a StartTLS handshake, and a socket of a client that failed half-way is not
 * unbound by anyone).
 */
function connections(publicOnly: boolean) {
  const sockets = new Set<Socket>();
  let read = 0;
  const lookup = publicOnly ? { lookup: publicOnlyLookup } : {};
  const watched = <S extends Socket>(socket: S): S => {
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > MAX_READ) socket.destroy(new Error('the directory answered more than 1 MiB'));
    });
    socket.once('close', () => sockets.delete(socket));
    return socket;
  };
  const servername = (host: string) => (isIP(host) ? {} : { servername: host });
  return {
    createConnection: ((port: number, host: string) => watched(connect({ port, host, ...lookup }))) as unknown as typeof connect,
    // ldaps:// calls it with (port, host, tlsOptions); a StartTLS with the options of the socket it upgrades.
    createSecureConnection: ((...args: [number, string, ConnectionOptions?] | [ConnectionOptions]) =>
      typeof args[0] === 'number'
        ? watched(tlsConnect({ port: args[0], host: args[1] as string, ...servername(args[1] as string), ...lookup, ...(args[2] as ConnectionOptions | undefined) }))
        : watched(tlsConnect(args[0]))) as unknown as typeof tlsConnect,
    destroy: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

export async function ldapSignIn(idps: Pick<IdentityProvidersReader, 'bindPassword'>, provider: View<IdentityProvider>, username: string, password: string, publicOnly: boolean): Promise<LdapOutcome> {
  const ldap = provider.ldap;
  if (!ldap || !username || !password) return { result: 'wrong' };
  // No bind password (a provider imported from a bundle, which carries none): an empty one would be an anonymous bind.
  const bindPassword = idps.bindPassword(provider);
  if (!bindPassword) return { result: 'unavailable', reason: 'the provider has no bind password yet' };
  const transport = connections(publicOnly);
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<LdapOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ result: 'unavailable', reason: 'the directory did not answer in time' }), Math.min(MOST_SIGN_IN_MS, 2 * ldap.timeoutMs));
  });
  try {
    return await Promise.race([signInAt(ldap, transport, provider.id, bindPassword, username, password, publicOnly), timeUp]);
  } finally {
    clearTimeout(timer);
    transport.destroy();
  }
}

async function signInAt(
  ldap: View<LdapSettings>,
  transport: ReturnType<typeof connections>,
  idpId: string,
  bindPassword: string,
  username: string,
  password: string,
  publicOnly: boolean,
): Promise<LdapOutcome> {
  let lastError = 'no server';
  for (const url of ldap.servers) {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (publicOnly && isInternalHost(host)) {
      lastError = `${host} is not a public address`;
      continue;
    }
    const connect = async () => {
      // TLS options only for ldaps:// (ldapts takes any for a wish to speak TLS from the start).
      const client = new Client({
        url,
        timeout: ldap.timeoutMs,
        connectTimeout: ldap.timeoutMs,
        strictDN: true,
        createConnection: transport.createConnection,
        createSecureConnection: transport.createSecureConnection,
      });
      if (ldap.startTls) await client.startTLS(isIP(host) ? {} : { servername: host });
      return client;
    };
    let service: Client | undefined;
    let asUser: Client | undefined;
    try {
      service = await connect();
      await service.bind(ldap.bindDn, bindPassword);
      const a = ldap.attributes;
      const filter = new AndFilter({
        filters: [
          new OrFilter({ filters: ldap.userObjectClasses.map((c) => new EqualityFilter({ attribute: 'objectClass', value: c })) }),
          new OrFilter({ filters: ldap.userFilters.map((attribute) => new EqualityFilter({ attribute, value: username })) }),
        ],
      });
      // The mapped attributes only: what the identity is made of, no more of the entry.
      const attributes = [...new Set(Object.values(a).filter((name) => name !== ''))];
      const { searchEntries } = await service.search(ldap.baseDn, { scope: 'sub', filter, sizeLimit: 2, attributes });
      // None, or a name that is not one person's: the same answer as a wrong password.
      if (searchEntries.length !== 1) return { result: 'wrong' };
      const entry = searchEntries[0]!;
      asUser = await connect();
      try {
        await asUser.bind(entry.dn, password);
      } catch (error) {
        if (error instanceof InvalidCredentialsError) return { result: 'wrong' };
        throw error;
      }
      const externalUserId = first(entry, a.idAttribute);
      if (!externalUserId) return { result: 'unavailable', reason: `the entry has no ${a.idAttribute}` };
      const email = first(entry, a.emailAttribute);
      const firstName = first(entry, a.firstNameAttribute);
      const lastName = first(entry, a.lastNameAttribute);
      const userName = first(entry, a.preferredUsernameAttribute) || username;
      return {
        result: 'ok',
        identity: {
          idpId,
          externalUserId,
          userName,
          email,
          // The directory's word on the address, when a mapped attribute says so.
          emailVerified: email !== '' && first(entry, a.emailVerifiedAttribute).toLowerCase() === 'true',
          firstName: firstName || userName,
          lastName: lastName || firstName || userName,
          displayName: first(entry, a.displayNameAttribute) || `${firstName} ${lastName}`.trim() || userName,
          nickName: first(entry, a.nickNameAttribute),
          preferredLanguage: first(entry, a.preferredLanguageAttribute).slice(0, 10),
          phone: first(entry, a.phoneAttribute).slice(0, 50),
          phoneVerified: first(entry, a.phoneVerifiedAttribute).toLowerCase() === 'true',
        },
      };
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    } finally {
      await Promise.all([service?.unbind().catch(() => undefined), asUser?.unbind().catch(() => undefined)]);
    }
  }
  return { result: 'unavailable', reason: lastError };
}
