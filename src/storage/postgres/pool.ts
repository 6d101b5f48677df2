import pg from 'pg';
import { StoreUnavailable } from '../../model/errors.js';

/** Node's own codes for a connection that could not be made or was cut. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** SQLSTATEs of a server going away or too busy: admin/crash shutdown, starting up, too many connections, statement timeout. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '57014']);

/**
 * Whether a failure means "the database is not there now" rather than a bug: what every surface
 * answers 503 (and the caller may retry), not 500. node-postgres reports a lost or refused
 * connection by message only for some cases, so those are matched too.
 */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08'))) return true;
  return /timeout exceeded when trying to connect|Connection terminated|not queryable|the database system is (starting up|shutting down)/i.test(error.message);
}

/** The failure as the rest of Sesame should see it: StoreUnavailable for a database not there, else as it was. */
export function storeError(error: unknown): unknown {
  return isUnavailable(error) ? new StoreUnavailable(error instanceof Error ? error.message : String(error)) : error;
}

/** How long statements and waits for a connection took (the metrics' histograms, when on). */
export interface PoolObserver {
  statement(seconds: number): void;
  connectionWait(seconds: number): void;
}

/**
 * node-postgres's pool, with the two things every statement of Sesame's needs in one place: a
 * database that is not there becomes StoreUnavailable (a 503 for the caller, never a 500), and
 * statement latency and connection waits are timed for the metrics. Only the promise forms are
 * changed (the pool itself calls `connect` with a callback inside `query`).
 */
export class StorePool extends pg.Pool {
  observer: PoolObserver | undefined;

  override query(...args: unknown[]): any {
    if (typeof args[args.length - 1] === 'function') return (super.query as (...a: unknown[]) => unknown)(...args);
    const startedAt = performance.now();
    return ((super.query as (...a: unknown[]) => Promise<unknown>)(...args) as Promise<unknown>).then(
      (result) => {
        this.observer?.statement((performance.now() - startedAt) / 1000);
        return result;
      },
      (error: unknown) => {
        throw storeError(error);
      },
    );
  }

  override connect(...args: unknown[]): any {
    if (args.length > 0) return (super.connect as (...a: unknown[]) => unknown)(...args);
    const startedAt = performance.now();
    return (super.connect() as Promise<pg.PoolClient>).then(
      (client) => {
        this.observer?.connectionWait((performance.now() - startedAt) / 1000);
        return client;
      },
      (error: unknown) => {
        throw storeError(error);
      },
    );
  }
}
