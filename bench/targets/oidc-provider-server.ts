import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/**
 * The comparison peer: panva's oidc-provider configured for the same work as Sesame's scenarios
 * (client_credentials with client_secret_basic, opaque tokens, JWT access tokens through a
 * resource indicator per algorithm, introspection and revocation), with its default in-memory
 * adapter. Run as a child process; prints one JSON line with its port and clients.
 */
const ALGS = ['RS256', 'ES256', 'EdDSA'] as const;

async function main(): Promise<void> {
  const keys: Record<string, unknown>[] = [];
  for (const alg of ALGS) {
    const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
    keys.push({ ...(await exportJWK(privateKey)), alg, use: 'sig', kid: `peer-${alg}` });
  }
  const ccSecret = randomBytes(32).toString('base64url');
  const introspectSecret = randomBytes(32).toString('base64url');
  const port = Number(process.env.PEER_PORT ?? '0');
  const placeholder = 'http://127.0.0.1';

  const build = (issuer: string) =>
    new Provider(issuer, {
      clients: [
        {
          client_id: 'bench-cc',
          client_secret: ccSecret,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          token_endpoint_auth_method: 'client_secret_basic',
        },
        {
          client_id: 'bench-introspect',
          client_secret: introspectSecret,
          grant_types: [],
          redirect_uris: [],
          response_types: [],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      jwks: { keys },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => {
            const alg = resource.replace('urn:bench:', '');
            if (!(ALGS as readonly string[]).includes(alg)) throw new Error('unknown resource');
            return { scope: 'api', audience: resource, accessTokenFormat: 'jwt', jwt: { sign: { alg } } };
          },
        },
      },
      scopes: ['api'],
      clientBasedCORS: () => true,
    });

  // Bind first to learn the port, then create the provider with the matching issuer.
  const { createServer } = await import('node:http');
  let provider: Provider | undefined;
  const server = createServer((req, res) => provider!.callback()(req, res));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as { port: number }).port;
  provider = build(`${placeholder}:${bound}`);
  process.stdout.write(
    JSON.stringify({
      ready: true,
      issuer: `${placeholder}:${bound}`,
      ccClient: { id: 'bench-cc', secret: ccSecret },
      introspector: { id: 'bench-introspect', secret: introspectSecret },
    }) + '\n',
  );
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

main().catch((error: unknown) => {
  process.stderr.write(String(error instanceof Error ? error.stack : error) + '\n');
  process.exit(1);
});
