import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * 404 and 405 answer in the style of the surface the path belongs to (OAuth JSON, ZITADEL API
 * JSON, a page in the reader's language), through the one error mapping.
 */
let server: InProcessServer;
beforeAll(async () => {
  server = await startInProcess();
});
afterAll(() => server?.close());

const call = (method: string, path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { method, headers, redirect: 'manual' });

describe('unknown paths and methods', () => {
  it('404 on an OAuth path is OAuth JSON', async () => {
    const res = await call('GET', '/oauth/v2/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'invalid_request', error_description: 'Not Found' });
  });

  it('404 on the API is a ZITADEL error body', async () => {
    const res = await call('GET', '/management/v1/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 5, message: 'Not Found (HTTP-404)' });
  });

  it('404 under /ui/ is a page in the language asked for', async () => {
    const de = await call('GET', '/ui/nope', { 'accept-language': 'de-CH, en;q=0.5' });
    expect(de.status).toBe(404);
    expect(de.headers.get('content-type')).toMatch(/text\/html/);
    const text = await de.text();
    expect(text).toContain('lang="de"');
    expect(text).toContain('Diese Seite gibt es nicht.');
    const en = await call('GET', '/ui/nope?ui_locales=en', { 'accept-language': 'de' });
    expect(await en.text()).toContain('This page does not exist.');
  });

  it('405 names the allowed methods, in each surface own shape', async () => {
    const oauth = await call('PUT', '/oauth/v2/token');
    expect(oauth.status).toBe(405);
    expect(oauth.headers.get('allow')).toBe('POST');
    expect(((await oauth.json()) as { error: string }).error).toBe('invalid_request');

    const api = await call('PATCH', '/management/v1/users/human', { authorization: `Bearer ${server.pat}` });
    expect(api.status).toBe(405);
    expect(((await api.json()) as { code: number }).code).toBe(12);

    const page = await call('DELETE', '/ui/login/login', { 'accept-language': 'de' });
    expect(page.status).toBe(405);
    expect(page.headers.get('allow')).toMatch(/GET/);
    expect(await page.text()).toContain('Diese Seite kann so nicht verwendet werden.');
  });
});
