import type { BatchKind } from '../observability/labels.js';
import { recordBatch, recordBatchPending } from '../observability/recorder.js';
import { traced, tracingOn } from '../observability/tracing.js';

/**
 * Batches work for the worker pool: everything submitted while the pool is busy (or within one
 * event-loop turn) rides the next task together, so a pool round trip is paid per batch, not per
 * item. Batchers that share a pool share its `Slots` (one task per worker thread at a time).
 */
export class Slots {
  private inUse = 0;
  private readonly waiting = new Set<() => void>();

  constructor(private readonly limit: () => number) {}

  tryAcquire(): boolean {
    if (this.inUse >= this.limit()) return false;
    this.inUse++;
    return true;
  }

  /** Frees a slot and lets every batcher with queued work try again. */
  release(): void {
    this.inUse--;
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const wake of waiting) wake();
  }

  wait(wake: () => void): void {
    this.waiting.add(wake);
  }
}

interface Pending<I, O> {
  item: I;
  resolve: (result: O) => void;
  reject: (error: unknown) => void;
}

export class Batcher<I, O> {
  private queue: Pending<I, O>[] = [];
  private scheduled = false;
  private readonly wake = () => this.dispatch();

  constructor(
    /** Runs one batch; resolves with one result per item, in order. */
    private readonly send: (items: I[]) => Promise<O[]>,
    private readonly slots: Slots,
    private readonly maxBatch: number,
    /** What it batches, for metrics and spans. */
    private readonly kind: BatchKind,
  ) {}

  submit(item: I): Promise<O> {
    // A span per item, from its submission to its result: the wait for a batch and the batch's task.
    return tracingOn() ? traced(`pool ${this.kind}`, {}, () => this.queued(item)) : this.queued(item);
  }

  private queued(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      recordBatchPending(this.kind, 1);
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.dispatch();
      });
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      if (!this.slots.tryAcquire()) {
        this.slots.wait(this.wake);
        return;
      }
      const batch = this.queue.splice(0, this.maxBatch);
      recordBatchPending(this.kind, -batch.length);
      recordBatch(this.kind, batch.length);
      this.send(batch.map((p) => p.item))
        .then(
          (results) => {
            batch.forEach((p, i) => {
              p.resolve(results[i]!);
            });
          },
          (error: unknown) => {
            for (const p of batch) p.reject(error);
          },
        )
        .finally(() => this.slots.release());
    }
  }
}
