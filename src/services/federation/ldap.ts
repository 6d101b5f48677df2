import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AndFilter, Client, EqualityFilter, InvalidCredentialsError, OrFilter, type Entry } from 'ldapts';
import { isInternalHost, isPublicAddress } from '../../util/public-address.js';
import type { IdentityProvidersReader } from '../../actors/identity-providers.js';
import type { IdentityProvider } from '../../model/records.js';
import type { ExternalIdentity } from '../../model/external-identity.js';
import type { View } from '../../util/readonly.js';

/**
 * A sign-in at an LDAP directory (ZITADEL's LDAP provider), with ldapts: Sesame binds with the
 * provider's service account, finds the one entry of the configured object classes whose filter
 * attributes (`uid`, `mail`, …) equal the name typed, then binds as that entry with the password
 * typed (the directory decides it; an empty password is refused before, since an LDAP bind without
 * one is anonymous and succeeds). Filters are built as objects, so the name typed is a value,
 * never filter syntax. The entry's attributes become the external identity (its `idAttribute` the
 * link's key). Servers are tried in order while they cannot be reached.
 */
export type LdapOutcome = { result: 'ok'; identity: ExternalIdentity } | { result: 'wrong' } | { result: 'unavailable'; reason: string };

const first = (entry: Entry, attribute: string | undefined): string => {
  if (!attribute) return '';
  const value = entry[attribute];
  const one = Array.isArray(value) ? value[0] : value;
  return one === undefined ? '' : Buffer.isBuffer(one) ? one.toString('utf8') : String(one);
};

/**
 * Where to connect for a server URL: as it is, or (`publicOnly`: an org's provider) to the public
 * address its name resolves to now, the name kept for TLS, so no org administrator aims Sesame at
 * the network it runs in.
 */
async function target(url: string, publicOnly: boolean): Promise<{ url: string; servername: string }> {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!publicOnly) return { url, servername: host };
  if (isInternalHost(host)) throw new Error(`${host} is not a public address`);
  const address = isIP(host) ? host : (await lookup(host)).address;
  if (!isPublicAddress(address)) throw new Error(`${host} is not a public address`);
  parsed.hostname = isIP(address) === 6 ? `[${address}]` : address;
  return { url: parsed.toString().replace(/\/$/, ''), servername: host };
}

export async function ldapSignIn(idps: Pick<IdentityProvidersReader, 'bindPassword'>, provider: View<IdentityProvider>, username: string, password: string, publicOnly: boolean): Promise<LdapOutcome> {
  const ldap = provider.ldap;
  if (!ldap || !username || !password) return { result: 'wrong' };
  // No bind password (a provider imported from a bundle, which carries none): an empty one would be an anonymous bind.
  const bindPassword = idps.bindPassword(provider);
  if (!bindPassword) return { result: 'unavailable', reason: 'the provider has no bind password yet' };
  let lastError = 'no server';
  for (const url of ldap.servers) {
    const connect = async () => {
      const { url: at, servername } = await target(url, publicOnly);
      // TLS options only for ldaps:// (ldapts takes any for a wish to speak TLS from the start).
      const client = new Client({ url: at, timeout: ldap.timeoutMs, connectTimeout: ldap.timeoutMs, strictDN: true, ...(at.startsWith('ldaps:') ? { tlsOptions: { servername } } : {}) });
      if (ldap.startTls) await client.startTLS({ servername });
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
      const { searchEntries } = await service.search(ldap.baseDn, { scope: 'sub', filter, sizeLimit: 2, attributes: ['*'] });
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
          idpId: provider.id,
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
