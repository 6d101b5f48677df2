import pg from 'pg';
import { StoreUnavailable } from '../../model/errors.js';
import { recordConnectionWait, recordStatement } from '../../observability/recorder.js';

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

/**
 * node-postgres's pool, with the two things every statement of Sesame's needs in one place: a
 * database that is not there becomes StoreUnavailable (a 503 for the caller, never a 500), and
 * statement latency and connection waits are timed for the metrics (when on). Only the promise forms are
 * changed (the pool itself calls `connect` with a callback inside `query`).
 */
export class StorePool extends pg.Pool {
  private lanes: PipelinedLanes | undefined;

  /**
   * `lanes`: connections of their own (beside the pool's) on which single statements are pipelined
   * (sent without waiting for the answer before): most of Sesame's statements are one each, and a
   * checkout from the pool per statement cost more CPU than the statement (measured on 2 cores:
   * see docs/multi-node.md). Transactions keep to the pool's connections.
   */
  constructor(config: pg.PoolConfig, lanes = 0) {
    super(config);
    if (lanes > 0) this.lanes = new PipelinedLanes(config, lanes);
  }

  override query(...args: unknown[]): any {
    if (typeof args[args.length - 1] === 'function') return (super.query as (...a: unknown[]) => unknown)(...args);
    const startedAt = performance.now();
    const sent = this.lanes
      ? this.lanes.query(args[0] as string | pg.QueryConfig, args[1] as unknown[] | undefined)
      : ((super.query as (...a: unknown[]) => Promise<unknown>)(...args) as Promise<unknown>);
    return sent.then(
      (result) => {
        recordStatement((performance.now() - startedAt) / 1000, { total: this.totalCount, idle: this.idleCount, waiting: this.waitingCount });
        return result;
      },
      (error: unknown) => {
        throw storeError(error);
      },
    );
  }

  override async end(): Promise<void> {
    await this.lanes?.end();
    await super.end();
  }

  override connect(...args: unknown[]): any {
    if (args.length > 0) return (super.connect as (...a: unknown[]) => unknown)(...args);
    const startedAt = performance.now();
    return (super.connect() as Promise<pg.PoolClient>).then(
      (client) => {
        recordConnectionWait((performance.now() - startedAt) / 1000);
        return client;
      },
      (error: unknown) => {
        throw storeError(error);
      },
    );
  }
}

/**
 * A few connections in pipeline mode (node-postgres 8.23's `pipeline`), each statement sent on the
 * next one in turn. A lane whose connection was lost is connected again at its next statement.
 */
class PipelinedLanes {
  private readonly lanes: (Promise<pg.Client> | undefined)[];
  private next = 0;
  private ended = false;

  constructor(
    private readonly config: pg.ClientConfig,
    count: number,
  ) {
    this.lanes = new Array(count).fill(undefined);
  }

  /** A statement's text and values, or a named (prepared once per connection) statement's config. */
  query(statement: string | pg.QueryConfig, values: unknown[] | undefined): Promise<unknown> {
    const index = this.next++ % this.lanes.length;
    const lane = (this.lanes[index] ??= this.connect(index));
    return lane.then((client) => (typeof statement === 'string' ? client.query(statement, values) : client.query(statement)));
  }

  private connect(index: number): Promise<pg.Client> {
    if (this.ended) return Promise.reject(new Error('the pool has ended'));
    const client = new pg.Client({ ...this.config, pipeline: true } as pg.ClientConfig);
    const lost = () => {
      if (this.lanes[index] === connected) this.lanes[index] = undefined;
    };
    // A lost connection fails the statements on it (the callers see StoreUnavailable); the next one connects anew.
    client.on('error', lost);
    client.on('end', lost);
    const connected = client.connect().then(
      () => client,
      (error: unknown) => {
        lost();
        throw error;
      },
    );
    return connected;
  }

  async end(): Promise<void> {
    this.ended = true;
    const lanes = this.lanes.splice(0);
    await Promise.all(lanes.map((lane) => lane?.then((client) => client.end()).catch(() => undefined)));
  }
}
