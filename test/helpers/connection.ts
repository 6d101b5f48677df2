import { request, Agent as HttpAgent } from 'node:http';

const FORM = 'application/x-www-form-urlencoded';

/**
 * One kept-alive TCP connection: whatever HTTP thread accepted it serves all its requests, so many
 * of them spread a test's requests over the server's threads (SESAME_HTTP_THREADS).
 */
export class Connection {
  private readonly agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
  constructor(private readonly port: number) {}

  /** A form POST; the body parsed as JSON (empty: `{}`). */
  async post(
    path: string,
    authorization: string | undefined,
    form: Record<string, string>,
    /** More headers; an array value is sent as that many header lines (e.g. two DPoP headers). */
    extra: Record<string, string | string[]> = {},
  ): Promise<{ status: number; body: Record<string, any>; headers: Record<string, string | string[] | undefined> }> {
    const payload = new URLSearchParams(form).toString();
    const { status, text, headers } = await this.send(
      'POST',
      path,
      { 'content-type': FORM, ...(authorization ? { authorization } : {}), 'content-length': String(Buffer.byteLength(payload)), ...extra },
      payload,
    );
    return { status, body: text ? (JSON.parse(text) as Record<string, any>) : {}, headers };
  }

  /** A form POST answered with a page (the login's): the body as text. */
  postPage(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
    const payload = new URLSearchParams(form).toString();
    return this.send('POST', path, { 'content-type': FORM, 'content-length': String(Buffer.byteLength(payload)), ...headers }, payload);
  }

  get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
    return this.send('GET', path, headers, undefined);
  }

  /** Any request over this connection, answered as is. */
  send(
    method: string,
    path: string,
    headers: Record<string, string | string[]>,
    payload: string | undefined,
  ): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: this.port, path, method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString(), headers: res.headers }));
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * Kept-alive connections, `perThread` on each HTTP thread: the kernel picks the thread of each new
 * connection, so a test that must run on every thread opens connections (one discovery request
 * each, to see which thread took it) until every thread holds its share, instead of hoping the
 * spread of a few connections reaches them all.
 */
export async function connectionsOnEveryThread(port: number, requestsPerThread: () => Promise<number[]>, perThread: number): Promise<Connection[]> {
  const threads = (await requestsPerThread()).length;
  const held: Connection[][] = Array.from({ length: threads }, () => []);
  for (let opened = 0; held.some((h) => h.length < perThread); opened++) {
    if (opened >= 64 * threads * perThread) throw new Error(`no connection reached every thread after ${opened} tries: ${held.map((h) => h.length).join(', ')}`);
    const before = await requestsPerThread();
    const c = new Connection(port);
    await c.get('/oauth/v2/keys');
    const after = await requestsPerThread();
    const thread = after.findIndex((n, i) => n > before[i]!);
    if (thread >= 0 && held[thread]!.length < perThread) held[thread]!.push(c);
    else c.close();
  }
  return held.flat();
}
