import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { api, basicAuth, createApiApp } from './helpers/api.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';
import { createHuman, type Human } from './helpers/oidc.js';
import { launchChromium, RUN_BROWSER } from './helpers/browser.js';

/**
 * An AI agent's way in (issue 14): the MCP TypeScript SDK's client-side authorization against
 * Sesame, end to end. A real MCP server (the SDK's, over Streamable HTTP) protects itself with
 * Sesame: it answers 401 with its protected resource metadata (RFC 9728) naming Sesame, and
 * accepts only tokens Sesame's introspection (with the API app of its project) calls active and
 * whose `aud` holds its URL. The SDK's client discovers Sesame,
 * registers itself (RFC 7591), sends the person to the login pages with PKCE and `resource`
 * (RFC 8707), which a real browser (chromium) fills in as a person would, back to the agent's
 * loopback callback; the agent exchanges the code and calls a tool.
 */
let browser: Browser;
/** The agent's loopback listener for the redirect (as MCP clients and CLI tools listen), and what reached it. */
let callback: Server;
let callbackUrl: string;
const callbacks: URL[] = [];
let sesame: InProcessServer;
let person: Human;
let mcp: Server;
let mcpUrl: string;

/** What the MCP server's introspection said about the last token it accepted. */
let introspected: Record<string, unknown> | undefined;

/**
 * The MCP server: its protected resource metadata, and the MCP endpoint behind Sesame's tokens.
 * `introspector`: the API app it introspects with (ZITADEL's way for a resource server).
 */
function startMcpServer(issuer: string, introspector: { clientId: string; clientSecret: string }): Promise<string> {
  let base = '';
  const metadataPath = '/.well-known/oauth-protected-resource/mcp';
  const unauthorized = (res: ServerResponse, error?: string) => {
    res.writeHead(401, {
      'WWW-Authenticate': `Bearer${error ? ` error="${error}",` : ''} resource_metadata="${base}${metadataPath}"`,
      'Content-Type': 'application/json',
    });
    res.end(JSON.stringify({ error: error ?? 'unauthorized' }));
  };
  mcp = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const path = new URL(req.url!, base).pathname;
      if (req.method === 'GET' && path === metadataPath) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [issuer], bearer_methods_supported: ['header'], scopes_supported: ['openid'] }));
        return;
      }
      if (path !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const header = req.headers.authorization ?? '';
      if (!header.startsWith('Bearer ')) return unauthorized(res);
      const token = header.slice(7);
      const answer = await fetch(`${issuer}/oauth/v2/introspect`, {
        method: 'POST',
        headers: { authorization: basicAuth(introspector.clientId, introspector.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
      const info = (await answer.json()) as Record<string, unknown>;
      // The audience check is what makes the token this server's (MCP authorization: servers MUST validate the audience).
      if (info.active !== true || !Array.isArray(info.aud) || !info.aud.includes(`${base}/mcp`)) return unauthorized(res, 'invalid_token');
      introspected = info;
      const sub = info.sub as string;
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      const server = new McpServer({ name: 'sesame-test-mcp', version: '1.0.0' });
      server.registerTool('whoami', { description: 'The subject of the access token' }, () => ({ content: [{ type: 'text', text: sub }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(Object.assign(req, { auth: { token, clientId: '', scopes: [] } }), res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  });
  return new Promise((resolve) =>
    mcp.listen(0, '127.0.0.1', () => {
      base = `http://127.0.0.1:${(mcp.address() as AddressInfo).port}`;
      resolve(`${base}/mcp`);
    }),
  );
}

/** The agent's side: what the SDK asks its host to keep, and the browser it asks to open. */
class TestProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  get redirectUrl() {
    return callbackUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP test agent',
      redirect_uris: [callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'openid profile',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

let tools: { projectId: string; clientId: string; clientSecret: string };

/** Open dynamic registration into `projectId` of the default org, as an instance owner sets it up for agents. */
async function enableOpenRegistration(projectId: string): Promise<void> {
  const org = await api(sesame, 'GET', '/management/v1/orgs/me', { token: sesame.pat });
  const set = await api(sesame, 'PUT', '/admin/v1/settings/dynamic_client_registration', {
    token: sesame.pat,
    body: { enabled: true, allowUnauthenticated: true, orgId: org.body.org.id, projectId },
  });
  expect(set.status, JSON.stringify(set.body)).toBe(200);
}

beforeAll(async () => {
  callback = createServer((req, res) => {
    const url = new URL(req.url!, callbackUrl);
    if (url.pathname !== new URL(callbackUrl).pathname) return void res.writeHead(404).end(); // the browser's favicon
    callbacks.push(url);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="done">Signed in. You can close this window.</p>');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/mcp-callback`;
  sesame = await startInProcess();
  person = await createHuman(sesame);
  // The MCP server is an API of the instance's default org: a project with an API app, which
  // registers the server's URL as its resource (RFC 8707).
  tools = await createApiApp(sesame, 'MCP tools');
  mcpUrl = await startMcpServer(sesame.issuer, tools);
  const project = await api(sesame, 'PUT', `/management/v1/projects/${tools.projectId}`, { token: sesame.pat, body: { name: 'MCP tools', resourceUris: [mcpUrl] } });
  expect(project.status, JSON.stringify(project.body)).toBe(200);
  const apps = await api(sesame, 'POST', '/management/v1/projects', { token: sesame.pat, body: { name: 'Agents' } });
  await enableOpenRegistration(apps.body.id as string);
  if (RUN_BROWSER) {
    browser = await launchChromium();
  }
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => callback?.close(resolve));
  await new Promise((resolve) => mcp?.close(resolve));
  await sesame?.close();
});

describe.skipIf(!RUN_BROWSER)('MCP TypeScript SDK client authorization', () => {
  it('discovers, registers, signs the person in with PKCE and resource, and calls a tool with a token for the MCP server', async () => {
    const provider = new TestProvider();
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
    await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);

    // The SDK registered itself and built the authorization URL: PKCE S256 and the MCP server as resource.
    expect(provider.client?.client_id).toBeTruthy();
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${sesame.issuer}/oauth/v2/authorize`);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl);

    // The person signs in on Sesame's pages in a browser; a registered loopback client is a native
    // app, so ZITADEL's success page comes last and the browser leaves it for the agent's listener.
    const page = await (await browser.newContext()).newPage();
    await page.goto(authorizationUrl.toString());
    await page.fill('input[name=loginName]', person.loginName);
    await page.click('button[type=submit]');
    await page.waitForSelector('input[name=password]');
    await page.fill('input[name=password]', person.password);
    await page.click('form[action="/ui/login/password"] button[type=submit]');
    // The agent registered itself: the person is asked to allow it, the MCP server's URL among what it asks for.
    await page.waitForSelector('form[action="/ui/login/consent"]');
    expect(await page.locator('ul.scopes').textContent()).toContain(mcpUrl);
    await page.click('button[name=decision][value=allow]');
    await page.waitForSelector('#done');
    const redirect = callbacks.at(-1)!;
    expect(redirect.origin + redirect.pathname).toBe(callbackUrl);
    expect(redirect.searchParams.get('iss')).toBe(sesame.issuer);
    await first.finishAuth(redirect.searchParams.get('code')!);

    expect(provider.saved!.access_token).toBeTruthy();
    const connected = new Client({ name: 'test-agent', version: '1.0.0' });
    await connected.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
    const result = await connected.callTool({ name: 'whoami', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: person.userId }]);
    // The token the agent got is for the MCP server: its URL and its project, not the agent's own project.
    expect(introspected!.aud).toEqual([provider.client!.client_id, mcpUrl, tools.projectId]);
    await connected.close();
  });
});
