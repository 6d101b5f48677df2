import type { Response } from './types.js';

/** Response builders with precomputed header objects (no per-request header building). */
const JSON_NO_STORE = Object.freeze({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store', Pragma: 'no-cache' });
const JSON_PLAIN = Object.freeze({ 'Content-Type': 'application/json' });

export function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return { status, headers: headers ? { ...JSON_PLAIN, ...headers } : JSON_PLAIN, body: JSON.stringify(body) };
}

/** JSON that carries tokens or secrets: never cached (RFC 6749 §5.1). */
export function jsonNoStore(status: number, body: unknown, headers?: Record<string, string>): Response {
  return { status, headers: headers ? { ...JSON_NO_STORE, ...headers } : JSON_NO_STORE, body: JSON.stringify(body) };
}

/** A response whose JSON body was serialized once ahead of time. */
export function precomputedJson(status: number, body: string, headers: Record<string, string>): Response {
  return { status, headers: { ...JSON_PLAIN, ...headers }, body };
}
