import { createHash } from 'node:crypto';
import { recordKind, type StorePort } from '../storage/store-port.js';

/**
 * The images and fonts of label policies, in the store by their SHA-256 (the same file once,
 * whichever org uploads it; a policy names it by that digest), so every thread and node serves
 * them. Written before the policy that names one; never changed.
 */
interface StoredAsset {
  type: string;
  bytes: Uint8Array;
}

const ASSETS = recordKind<StoredAsset>('labelAssets');

export class LabelAssetsActor {
  constructor(private readonly store: StorePort) {}

  /** Stores the file (durably); its id. */
  async put(bytes: Uint8Array, type: string): Promise<string> {
    const id = createHash('sha256').update(bytes).digest('hex');
    await this.store.durable(this.store.insertIfAbsent(ASSETS, id, { type, bytes }));
    return id;
  }

  get(id: string): Promise<StoredAsset | undefined> {
    return /^[0-9a-f]{64}$/.test(id) ? this.store.get(ASSETS, id) : Promise.resolve(undefined);
  }
}
