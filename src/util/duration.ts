/**
 * Go-style duration strings ("12h", "1m30s", "30m0s", "1.5s", "300ms"), as ZITADEL uses for
 * lifetimes and import/export timeouts, plus protobuf JSON durations ("43200s").
 */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d+(?:\.\d+)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;

/** Parses a duration to milliseconds, or returns undefined when the string is not a duration. */
export function parseDuration(text: string): number | undefined {
  const input = text.trim();
  if (input === '0') return 0;
  if (input.length === 0 || input.length > 64) return undefined;
  let ms = 0;
  PART.lastIndex = 0;
  let consumed = 0;
  while (consumed < input.length) {
    PART.lastIndex = consumed;
    const match = PART.exec(input);
    if (!match) return undefined;
    ms += Number(match[1]) * UNIT_MS[match[2]!]!;
    consumed = PART.lastIndex;
  }
  return Number.isFinite(ms) ? ms : undefined;
}

/** Protobuf JSON form of a duration: seconds with an "s" suffix ("43200s", "1.5s"). */
export function formatProtoDuration(ms: number): string {
  return `${ms / 1000}s`;
}
