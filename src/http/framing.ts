/**
 * Whether Sesame's HTML pages may be framed (the instance security policy's enableIframeEmbedding
 * and allowedOrigins). Nobody may by default (clickjacking); when enabled, the page itself and the
 * allowed origins may (ZITADEL: `frame-ancestors 'self' <allowedOrigins>`), and the user-agent
 * cookie must be SameSite=None to reach Sesame inside a third-party frame.
 *
 * Process-wide because one process serves one instance: the settings actor sets it at start and
 * on every change, and html.ts / cookies.ts read it without a lookup per response.
 */
export interface FramingPolicy {
  enableIframeEmbedding: boolean;
  allowedOrigins: readonly string[];
}

let current: { embeddable: boolean; frameAncestors: string } = { embeddable: false, frameAncestors: "'none'" };
const listeners: (() => void)[] = [];

export function setFramingPolicy(policy: FramingPolicy): void {
  current = policy.enableIframeEmbedding ? { embeddable: true, frameAncestors: ["'self'", ...policy.allowedOrigins].join(' ') } : { embeddable: false, frameAncestors: "'none'" };
  for (const listener of listeners) listener();
}

/** True when the pages may be framed by other origins. */
export function embeddable(): boolean {
  return current.embeddable;
}

/** The `frame-ancestors` source list. */
export function frameAncestors(): string {
  return current.frameAncestors;
}

/** Calls `listener` now and after every change (for headers precomputed from the policy). */
export function onFramingPolicy(listener: () => void): void {
  listeners.push(listener);
  listener();
}
