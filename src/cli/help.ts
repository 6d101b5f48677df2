/** The `sesame` command's help texts. */
export const MAIN_HELP = `Usage: sesame <command> [options]

Commands:
  start              run the server (options: sesame start --help; the same as node dist/main.js)
  export             write organizations to a ZITADEL export bundle {"orgs":[…]}
  import             import a bundle into an instance
  keys rotate        rotate the token signing key now
  admin-pat          print where the bootstrap admin's token is, or issue a new one (--new)
  copy               copy a data dir into an empty PostgreSQL database, or back (offline)
  migrate            bring a PostgreSQL database's schema up to this build's

export, import and keys rotate work either against a running server:
  --url URL          the server (env SESAME_URL), e.g. http://localhost:8080
  --pat-file FILE    a file holding an IAM_OWNER token, e.g. data/admin.pat (env SESAME_PAT_FILE,
                     or the token itself in SESAME_PAT)
or offline, on a data dir that no running server holds:
  --data-dir DIR     the server's data dir (env SESAME_DATA_DIR); server settings such as --master-key
                     (SESAME_MASTERKEY) and --issuer (SESAME_ISSUER) apply as to sesame start; with
                     --database-url (SESAME_DATABASE_URL) the work is on the database, nodes running or
                     not, and the data dir holds the master key file and admin.pat

  -h, --help         this text; sesame <command> --help for a command's options

Exit codes: 0 done, 1 failed, 2 usage or settings (e.g. a data dir a server holds).
`;

export const TARGET_HELP = `Target (one of):
  --url URL             a running server (env SESAME_URL), with --pat-file FILE (env SESAME_PAT_FILE)
                        or the token itself in env SESAME_PAT (an IAM_OWNER token, e.g. data/admin.pat)
  --data-dir DIR        offline, on a data dir no server holds (env SESAME_DATA_DIR); the server's
                        settings apply (--master-key/SESAME_MASTERKEY, --issuer/SESAME_ISSUER, …);
                        with --database-url URL (SESAME_DATABASE_URL), on that database
`;

export const HELP: Record<string, string> = {
  export: `Usage: sesame export (--url URL --pat-file FILE | --data-dir DIR) [options]

Writes ZITADEL's export bundle {"orgs":[…]} (POST /admin/v1/export).
  --out FILE            where to write the bundle; - for stdout (default -)
  --org-ids ID,…        only these organizations (repeatable)
  --excluded-org-ids ID,…  all but these organizations (repeatable)
  --with-passwords      include password hashes and client secret digests
  --with-otp            include TOTP secrets
  --timeout DURATION    give up after this long (default 60m)

${TARGET_HELP}`,
  import: `Usage: sesame import (--url URL --pat-file FILE | --data-dir DIR) --in FILE [options]

Imports a bundle {"orgs":[…]} (POST /admin/v1/import); prints what was imported and what was skipped.
  --in FILE             the bundle; - for stdin
  --v1                  the bundle is a ZITADEL v1 export (dataOrgsv1)
  --add-to-existing-orgs
                        add to organizations that exist already (addToExistingOrgs); without it
                        they are refused and nothing is imported into them
  --report FILE         also write the full import report (JSON) there
  --timeout DURATION    give up after this long (default 60m)

Offline on a new or empty data dir, the instance is created first, as at a server's first start.

${TARGET_HELP}`,
  keys: `Usage: sesame keys rotate (--url URL --pat-file FILE | --data-dir DIR)

Rotates the signing key now (POST /admin/v1/keys/_rotate): the next key (already published in the
JWKS) signs from now on, the old one stays published until what it signed has expired. Prints the
new key id.

${TARGET_HELP}`,
  'admin-pat': `Usage: sesame admin-pat [--data-dir DIR] [--new [--print]]

Prints the path of the bootstrap admin's personal access token file, <data dir>/admin.pat.
  --data-dir DIR        the data dir (env SESAME_DATA_DIR, default ./data)
  --new                 issue a new token for the bootstrap admin (offline: refused while a server
                        holds the data dir) and write it to <data dir>/admin.pat (mode 0600),
                        replacing the file; earlier tokens stay valid until removed
  --print               with --new: print the new token on stdout
  --database-url URL    with --new: the instance is in this PostgreSQL database (env
                        SESAME_DATABASE_URL); give its master key (--master-key or the data dir's file)
`,
  copy: `Usage: sesame copy [--data-dir DIR] --database-url URL [--from-database]

Copies a data dir into an empty PostgreSQL database, in one transaction: organizations, users,
projects, apps, grants, signing keys and settings, and every token, code, refresh token, session and
sign-in under way, so nobody signs in again. Offline: refused while a server holds the data dir. A
database that holds Sesame data already is refused, nothing written. Prints what was copied per
store. Every node on the database needs the data dir's master key.
With --from-database, the way back: the database, read in one snapshot, into a new data dir (refused
if it holds Sesame data); stop the nodes first. Start Sesame on it with the nodes' master key.
  --data-dir DIR        the data dir (env SESAME_DATA_DIR, default ./data)
  --database-url URL    postgres://user:password@host:port/database (env SESAME_DATABASE_URL)
  --from-database       copy the database into the data dir instead
`,
  migrate: `Usage: sesame migrate --database-url URL [--allow-destructive]

Applies the schema migrations this build has and the database lacks, each once, in its own
transaction, under the lock every node's start takes (a start migrates by itself; run this first to
upgrade before any node restarts). A database newer than this build is refused. A migration that
drops what older nodes still read is applied only with --allow-destructive, once every node runs a
build that no longer reads it (this build has none). Prints the schema version.
  --database-url URL    postgres://user:password@host:port/database (env SESAME_DATABASE_URL)
  --allow-destructive   also apply migrations that drop data
`,
};
