/**
 * Whether a row as stored is the version `base` (both absent, or the same `sequence`: every change
 * a client can see moves it). Rows without a sequence (keys, secrets: written once, then removed)
 * compare by presence.
 */
export function sameVersion(stored: unknown, base: unknown): boolean {
  if (stored === undefined || base === undefined) return stored === base;
  const version = (row: unknown) => (row as { sequence?: unknown }).sequence;
  return version(stored) === version(base);
}
