import { Packr } from 'msgpackr';
import { versionOf } from '../same-version.js';

/**
 * How values are stored on PostgreSQL: msgpack as plain maps (no record extension), so any
 * client can read them and a value copied from LMDB is decoded and encoded once.
 */
export const codec = new Packr({ useRecords: false, mapsAsObjects: true });

/** A directory row's version as the `sequence` column holds it (null: a row without one). */
export function sequenceColumn(row: unknown): number | null {
  const version = versionOf(row);
  return typeof version === 'number' ? version : null;
}
