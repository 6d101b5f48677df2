import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tokenClaims } from './token-record.js';
import { open } from 'lmdb';

/**
 * The serial part of the write paths, for the multi-core projection: LMDB lets one write
 * transaction run at a time, so however many HTTP threads issue or revoke tokens, their writes
 * take turns. This measures how long the writer is held per token record (an opaque token's
 * claims under its SHA-256, as Sesame stores them) in transactions of the sizes a busy server
 * commits (lmdb batches every write of an event-loop turn into one), without the fsync, which
 * runs outside the writer (lmdb's overlapping sync), and without encoding the record (msgpack),
 * which each thread does in parallel when it calls put. 1e6 / µs-per-write caps what any number
 * of cores can issue or revoke per second.
 *
 *   node dist-bench/bench/serial.js
 */
const dir = mkdtempSync(join(tmpdir(), 'sesame-serial-'));
const root = open({ path: join(dir, 'serial.lmdb'), maxDbs: 4, mapSize: 8 * 1024 ** 3, encoding: 'msgpack', noSync: true });
const tokens = root.openDB<any, Buffer>({ name: 'tokens', encoding: 'msgpack', keyEncoding: 'binary' });
// The same records, encoded beforehand as Sesame's store encodes them: only the writer's part is timed.
const encoded = root.openDB<Buffer, Buffer>({ name: 'tokensEncoded', encoding: 'binary', keyEncoding: 'binary' });
const now = Math.floor(Date.now() / 1000);
const claims = () => tokenClaims(now);

/** µs per record; keys and records are made beforehand (each thread makes its own, in parallel). */
function measure(batch: number, keys: readonly Buffer[], write: (key: Buffer, i: number) => void): number {
  const transactions = Math.floor(keys.length / batch);
  const started = process.hrtime.bigint();
  for (let t = 0; t < transactions; t++) {
    root.transactionSync(() => {
      for (let i = t * batch; i < (t + 1) * batch; i++) write(keys[i]!, i);
    });
  }
  return Number(process.hrtime.bigint() - started) / 1000 / (transactions * batch);
}

console.log('LMDB writer held per record (µs), by records per transaction:');
console.log('batch   issue (put)   revoke (remove)   serial cap (writes/s)');
for (const batch of [1, 10, 50, 200]) {
  const keys = Array.from({ length: 40_000 }, () => createHash('sha256').update(randomBytes(32)).digest());
  const records = keys.map(() => (tokens as unknown as { encoder: { encode(value: unknown): Buffer } }).encoder.encode(claims()));
  const put = measure(batch, keys, (key, i) => void encoded.put(key, records[i]!));
  const remove = measure(batch, keys, (key) => void encoded.remove(key));
  console.log(
    `${String(batch).padStart(5)}   ${put.toFixed(2).padStart(11)}   ${remove.toFixed(2).padStart(15)}   ${Math.floor(1e6 / Math.max(put, remove))
      .toLocaleString('en-US')
      .padStart(21)}`,
  );
}
await root.close();
rmSync(dir, { recursive: true, force: true });
