import type { Meta } from '../model/records.js';

/**
 * ZITADEL's ObjectDetails: the record's change counter as an int64 string, a timestamp and the
 * owning org. Add responses carry `creationDate`, change responses `changeDate`, reads both.
 */
export interface Details {
  sequence: string;
  creationDate?: string;
  changeDate?: string;
  resourceOwner?: string;
}

/** RFC 3339 UTC with `Z`; fractional seconds only when non-zero, as protojson writes them. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

export function addedDetails(record: Meta, resourceOwner: string | undefined): Details {
  return { sequence: String(record.sequence), creationDate: rfc3339(record.createdAt), resourceOwner };
}

export function changedDetails(record: Meta, resourceOwner: string | undefined): Details {
  return { sequence: String(record.sequence), changeDate: rfc3339(record.changedAt), resourceOwner };
}

export function viewDetails(record: Meta, resourceOwner: string | undefined): Details {
  return {
    sequence: String(record.sequence),
    creationDate: rfc3339(record.createdAt),
    changeDate: rfc3339(record.changedAt),
    resourceOwner,
  };
}

/** ListDetails of a search response. */
export function listDetails(total: number): { totalResult: string; viewTimestamp: string } {
  return { totalResult: String(total), viewTimestamp: rfc3339(Date.now()) };
}
