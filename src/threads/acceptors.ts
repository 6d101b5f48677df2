import { Worker } from 'node:worker_threads';
import type { HttpServer, RouteDescriptor } from '../http/server.js';
import { log, writeLogLine } from '../util/log.js';
import { WORKER_YOUNG_GENERATION_MB } from '../util/thread-memory.js';
import { relayedError } from './relayed-error.js';
import { MAIN_THREAD_METHODS, type AcceptorData, type MainThreadWork, type FromAcceptor, type ToAcceptor } from './protocol.js';

/** The HTTP acceptor threads beside the main thread (see acceptor.ts). */
export interface Acceptors {
  /** Has them join the port (the main thread serves and is ready); resolves once all of them listen. */
  join(): Promise<void>;
  /** The OS thread ids the threads reported once listening (where the platform has them). */
  osThreadIds(): number[];
  /** Requests each thread received so far, the main thread's first (forwarded ones count where they arrived). */
  served(): Promise<number[]>;
  /** Requests each acceptor thread handed to the main thread so far for what only it serves (one entry per acceptor; not those handed over while a thread's directory copy was being reloaded). */
  handedOver(): number[];
  /** Requests each acceptor thread handed to the main thread while its directory copy was behind and held back from loading whole. */
  handedOverWhileBehind(): number[];
  /** How often each acceptor thread loaded its copy of the directory whole (at its start, and when too far behind the change feed). */
  wholeDirectoryLoads(): Promise<number[]>;
  /** Stops them accepting, waits until what they received is answered, ends them. */
  stop(timeoutMs: number): Promise<void>;
}

export class AcceptorStartError extends Error {}

const ENTRY = new URL('./acceptor.js', import.meta.url);

/** A promise with its settling functions at hand. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  // Awaited later (or never, when the start already failed): not an unhandled rejection meanwhile.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/**
 * Starts `count` acceptor threads for the main thread's port and `routes` (its table, in mount
 * order), and serves what they forward with `server` (the main thread's own server, so a
 * forwarded request is answered exactly as one received here) and what they ask of it with
 * `work` (MainThreadWork). Resolves once each has loaded its copy of the
 * directory; they listen only after `join()`.
 */
export async function startAcceptors(count: number, routes: RouteDescriptor[], server: HttpServer, work: MainThreadWork, data: Omit<AcceptorData, 'index' | 'routes'>): Promise<Acceptors> {
  const threads: { worker: Worker; ended: Promise<void>; prepared: Promise<void>; listening: Promise<void> }[] = [];
  const osThreadIds: number[] = [];
  /** Per thread, questions awaiting its answer (a dead thread's are answered with `drained`). */
  const questions: ((message: FromAcceptor) => boolean)[][] = [];
  const endedSlots = new Set<number>();
  let stopping = false;
  let forwarded = 0;
  /** Per acceptor slot, the requests it handed over. */
  const handedOver: number[] = [];
  const handedOverWhileBehind: number[] = [];

  const start = (index: number) => {
    const prepared = deferred();
    const started = deferred();
    // A failure before it listens fails whichever step is under way.
    const reject = (error: unknown) => {
      prepared.reject(error);
      started.reject(error);
    };
    const worker = new Worker(ENTRY, { workerData: { ...data, index, routes } satisfies AcceptorData, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    const slot = threads.length;
    const ended = new Promise<void>((done) => worker.once('exit', () => done()));
    threads.push({ worker, ended, prepared: prepared.promise, listening: started.promise });
    questions.push([]);
    const send = (message: ToAcceptor, transfer?: ArrayBuffer[]) => worker.postMessage(message, transfer);
    let listening = false;
    worker.on('message', (message: FromAcceptor) => {
      switch (message.type) {
        case 'forward':
          forwarded++;
          if (!message.stale) handedOver[slot] = (handedOver[slot] ?? 0) + 1;
          else handedOverWhileBehind[slot] = (handedOverWhileBehind[slot] ?? 0) + 1;
          server.serveForwarded(message.request).then(
            (response) => {
              // A Buffer body may share a pooled allocation: copied to its own, then moved.
              const body = typeof response.body === 'string' ? response.body : new Uint8Array(response.body);
              send({ type: 'reply', id: message.id, response: { ...response, body } }, typeof body === 'string' ? [] : [body.buffer as ArrayBuffer]);
            },
            (error: unknown) => send({ type: 'failed', id: message.id, message: String(error) }),
          );
          return;
        case 'ask': {
          const { id, part, method, args } = message;
          // Only the listed methods, by name: the thread's message names a method, never runs code here.
          const target = work[part] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>> | undefined;
          const allowed = (MAIN_THREAD_METHODS[part] as ReadonlySet<string> | undefined)?.has(method) === true;
          const decided = target && allowed ? Promise.resolve().then(() => target[method]!.apply(target, args)) : Promise.reject(new Error(`no such work: ${String(part)}.${method}`));
          // An answer that cannot be sent (not cloneable) is refused instead: the asking request never waits forever.
          decided.then((value) => send({ type: 'answer', id, value })).catch((error: unknown) => send({ type: 'refused', id, error: relayedError(error) }));
          return;
        }
        case 'log':
          writeLogLine(message.line);
          return;
        case 'prepared':
          prepared.resolve();
          return;
        case 'listening':
          listening = true;
          if (message.osThreadId !== undefined) osThreadIds.push(message.osThreadId);
          started.resolve();
          return;
        case 'failed':
          reject(new AcceptorStartError(message.message));
          return;
        default: {
          const list = questions[slot]!;
          const at = list.findIndex((matches) => matches(message));
          if (at !== -1) list.splice(at, 1);
        }
      }
    });
    worker.on('error', (error) => {
      if (!listening) reject(error);
      else log.error('HTTP acceptor thread failed; the other threads go on serving the port', { thread: index, error: String(error) });
    });
    worker.once('exit', (code) => {
      if (!listening) reject(new AcceptorStartError(`HTTP acceptor thread ${index} exited with code ${code} before listening`));
      else if (!stopping) log.error('HTTP acceptor thread ended; the other threads go on serving the port', { thread: index, code });
      endedSlots.add(slot);
      for (const waiting of questions[slot]!.splice(0)) waiting({ type: 'drained' });
    });
    return prepared.promise;
  };

  const ask = <T>(slot: number, message: ToAcceptor, answer: (reply: FromAcceptor) => T | undefined): Promise<T> =>
    new Promise((resolve) => {
      const question = (reply: FromAcceptor) => {
        const value = answer(reply);
        if (value === undefined) return false;
        resolve(value);
        return true;
      };
      if (endedSlots.has(slot)) {
        question({ type: 'drained' });
        return;
      }
      questions[slot]!.push(question);
      threads[slot]!.worker.postMessage(message);
    });

  // Each thread drains, closes its sockets and storage, and ends by itself (see acceptor.ts).
  const stop = async (timeoutMs: number) => {
    stopping = true;
    await Promise.all(
      threads.map(({ worker, ended }) => {
        worker.postMessage({ type: 'drain', timeoutMs } satisfies ToAcceptor);
        // A thread that does not end in time is left to the process's exit (terminating it with
        // sockets open would abort the process).
        return Promise.race([ended, new Promise<void>((done) => setTimeout(done, timeoutMs + 2000).unref())]);
      }),
    );
  };

  try {
    // In parallel: each loads the whole directory.
    await Promise.all(Array.from({ length: count }, (_, i) => start(i + 1)));
  } catch (error) {
    await stop(1000).catch(() => {});
    throw error;
  }
  return {
    async join() {
      for (const { worker } of threads) worker.postMessage({ type: 'join' } satisfies ToAcceptor);
      await Promise.all(threads.map((thread) => thread.listening));
    },
    osThreadIds: () => [...osThreadIds],
    handedOver: () => threads.map((_, slot) => handedOver[slot] ?? 0),
    handedOverWhileBehind: () => threads.map((_, slot) => handedOverWhileBehind[slot] ?? 0),
    async served() {
      const counts = await Promise.all(threads.map((_, slot) => ask(slot, { type: 'served' }, (reply) => (reply.type === 'served' ? reply.count : reply.type === 'drained' ? 0 : undefined))));
      return [server.requestsServed() - forwarded, ...counts];
    },
    wholeDirectoryLoads: () => Promise.all(threads.map((_, slot) => ask(slot, { type: 'served' }, (reply) => (reply.type === 'served' ? reply.wholeLoads : reply.type === 'drained' ? 0 : undefined)))),
    stop,
  };
}
