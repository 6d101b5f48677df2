/** Minimal typing of the parts of oidc-provider the bench peer uses (the package ships no types). */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}

/** oidc-provider's in-memory adapter (one instance per model, over a shared store). */
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  export default class MemoryAdapter {
    constructor(model: string, store: unknown, clockTolerance?: number);
  }
}

/** The LRU store oidc-provider's in-memory adapter keeps its entries in. */
declare module 'oidc-provider/lib/helpers/lru.js' {
  export default class LRU {
    constructor(options: { maxSize: number });
  }
}
