import type pg from 'pg';
import type { ActivityEvent, EventQuery, NewEvent } from '../../model/activity.js';
import type { ActivityLog } from '../activity-log.js';

/** Any constant (others of Sesame: 0x5e5a3e01 migrations, 02 directory commits, 03 node starts): the advisory lock appends to the activity log take in turn. */
const ACTIVITY_LOCK = 0x5e5a3e04;

type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * Appends events inside the transaction (on its connection) of the change they describe. Appends
 * take turns under a transaction-scoped advisory lock and number their events after the last one:
 * numbers follow commit order, so a reader polling "after n" never misses an event committed later
 * under a lower number (a sequence would hand out numbers in the order transactions asked for
 * them). Only changes that carry events take the turn: administration, sign-ins, never a token's
 * issuance.
 */
export async function appendEvents(client: Queryable, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await client.query('SELECT pg_advisory_xact_lock($1)', [ACTIVITY_LOCK]);
  await insertEvents(
    client,
    'greatest((SELECT max(seq) FROM sesame_activity), (SELECT through FROM sesame_activity_pruned))',
    events.map((event, i) => ({ seq: i + 1, ...event })),
  );
}

/** Events copied from a data dir, under their own numbers, with the mark of what was pruned there (copy.ts). */
export async function copyEventsIn(client: Queryable, events: readonly ActivityEvent[], prunedThrough?: number): Promise<void> {
  if (events.length > 0) await insertEvents(client, '0', events);
  if (prunedThrough !== undefined) await client.query('UPDATE sesame_activity_pruned SET through = greatest(through, $1)', [prunedThrough]);
}

/** A page of events after `after`, by number, and the pruned mark (copy.ts, the way back). */
export async function eventsAfter(client: Queryable, after: number, limit: number): Promise<{ events: ActivityEvent[]; prunedThrough: number }> {
  const { rows } = await client.query<Row>('SELECT * FROM sesame_activity WHERE seq > $1 ORDER BY seq LIMIT $2', [after, limit]);
  const { rows: mark } = await client.query<{ through: string }>('SELECT through FROM sesame_activity_pruned');
  return { events: rows.map(eventOf), prunedThrough: Number(mark[0]?.through ?? 0) };
}

/** Inserts events numbered `base` + their `seq`. */
async function insertEvents(client: Queryable, base: string, events: readonly ActivityEvent[]): Promise<void> {
  await client.query(
    `INSERT INTO sesame_activity (seq, at, type, aggregate_type, aggregate_id, resource_owner, object_id, editor, service, address, payload)
     SELECT base.n + e.i, e.at, e.type, e.aggregate_type, e.aggregate_id, e.resource_owner, e.object_id, e.editor, e.service, e.address, e.payload
     FROM (SELECT ${base} AS n) base,
          unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::jsonb[])
            AS e(i, at, type, aggregate_type, aggregate_id, resource_owner, object_id, editor, service, address, payload)`,
    [
      events.map((e) => e.seq),
      events.map((e) => e.at),
      events.map((e) => e.type),
      events.map((e) => e.aggregateType),
      events.map((e) => e.aggregateId),
      events.map((e) => e.resourceOwner),
      events.map((e) => e.objectId ?? null),
      events.map((e) => e.editor),
      events.map((e) => e.service),
      events.map((e) => e.address ?? null),
      events.map((e) => (e.payload === undefined ? null : JSON.stringify(e.payload))),
    ],
  );
}

interface Row {
  seq: string;
  at: string;
  type: string;
  aggregate_type: string;
  aggregate_id: string;
  resource_owner: string;
  object_id: string | null;
  editor: string;
  service: string;
  address: string | null;
  payload: Record<string, unknown> | null;
}

function eventOf(row: Row): ActivityEvent {
  return {
    seq: Number(row.seq),
    at: Number(row.at),
    type: row.type,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    resourceOwner: row.resource_owner,
    ...(row.object_id === null ? {} : { objectId: row.object_id }),
    editor: row.editor,
    service: row.service,
    ...(row.address === null ? {} : { address: row.address }),
    ...(row.payload === null ? {} : { payload: row.payload }),
  };
}

/** The activity log on PostgreSQL (`sesame_activity`, migrations.ts): a search is one statement, its filters the indexes'. */
export class PostgresActivityLog implements ActivityLog {
  constructor(private readonly pool: pg.Pool) {}

  async search(query: EventQuery): Promise<ActivityEvent[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const param = (value: unknown) => (values.push(value), `$${values.length}`);
    if (query.from !== undefined) where.push(`seq ${query.asc ? '>' : '<'} ${param(query.from)}`);
    if (query.editor !== undefined) where.push(`editor = ${param(query.editor)}`);
    if (query.types?.length) where.push(`type = ANY(${param(query.types)}::text[])`);
    if (query.aggregateId !== undefined) where.push(`aggregate_id = ${param(query.aggregateId)}`);
    if (query.aggregateTypes?.length) where.push(`aggregate_type = ANY(${param(query.aggregateTypes)}::text[])`);
    if (query.resourceOwner !== undefined) where.push(`resource_owner = ${param(query.resourceOwner)}`);
    if (query.objectId !== undefined) where.push(`object_id = ${param(query.objectId)}`);
    if (query.since !== undefined) where.push(`at >= ${param(query.since)}`);
    if (query.until !== undefined) where.push(`at < ${param(query.until)}`);
    const { rows } = await this.pool.query<Row>(
      `SELECT * FROM sesame_activity ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq ${query.asc ? 'ASC' : 'DESC'} LIMIT ${param(query.limit)}`,
      values,
    );
    return rows.map(eventOf);
  }

  async prune(before: number): Promise<number> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // In turn with appends: the pruned mark never passes a number an append is about to take.
      await client.query('SELECT pg_advisory_xact_lock($1)', [ACTIVITY_LOCK]);
      const { rows } = await client.query<{ n: string; through: string | null }>(
        'WITH gone AS (DELETE FROM sesame_activity WHERE at < $1 RETURNING seq) SELECT count(*) AS n, max(seq) AS through FROM gone',
        [before],
      );
      if (rows[0]!.through !== null) await client.query('UPDATE sesame_activity_pruned SET through = greatest(through, $1)', [rows[0]!.through]);
      await client.query('COMMIT');
      return Number(rows[0]!.n);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
