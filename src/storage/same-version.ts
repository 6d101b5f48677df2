/**
 * Whether a row as stored is the version `base` (both absent, or the same `sequence`: every change
 * a client can see moves it). Rows without a sequence (keys, secrets: written once, then removed)
 * compare by presence.
 */
export function sameVersion(stored: unknown, base: unknown): boolean {
  if (stored === undefined || base === undefined) return stored === base;
  return versionOf(stored) === versionOf(base);
}

/** A directory row's version: its `sequence` (undefined for a row without one). */
export function versionOf(row: unknown): unknown {
  return (row as { sequence?: unknown } | null | undefined)?.sequence;
}
