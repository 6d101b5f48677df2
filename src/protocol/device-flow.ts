import { randomInt } from 'node:crypto';

/**
 * The device authorization grant's rules (RFC 8628) as ZITADEL serves them (docs/compatibility.md §4.6: codes
 * live 5 minutes, devices poll every 5 seconds, user codes are 8 characters of
 * `BCDFGHJKLMNPQRSTVWXZ` with a dash after 4). Pure functions and constants.
 */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const DEVICE_CODE_LIFETIME_MS = 5 * 60_000;
export const POLL_INTERVAL_MS = 5_000;
/** RFC 8628 §3.5: `slow_down` adds 5 seconds to the interval, for that and every later request. */
export const SLOW_DOWN_STEP_MS = 5_000;

/** The rules the device authorizations actor applies (src/actors/device-authorizations.ts). */
export const DEVICE_FLOW_RULES = {
  lifetimeMs: DEVICE_CODE_LIFETIME_MS,
  intervalMs: POLL_INTERVAL_MS,
  slowDownStepMs: SLOW_DOWN_STEP_MS,
  newUserCode: () => newUserCode(),
  maxRecordsPerClient: 10_000,
};

/** Consonants only (no vowels: no words), no digits (no 0/O, 1/I mixups), as ZITADEL and RFC 8628 §6.1. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;

/** A new user code, canonical form (8 characters, no dash); 20^8 ≈ 2^34.6 codes. */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** As shown to people: a dash after 4 characters. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What a person typed, in canonical form, or undefined when it cannot be a user code. Case,
 * spaces and dashes do not matter (RFC 8628 §6.1: be lenient with what people type).
 */
export function normalizeUserCode(typed: string): string | undefined {
  if (typed.length > 64) return undefined;
  const code = typed.toUpperCase().replace(/[\s-]+/g, '');
  if (code.length !== USER_CODE_LENGTH) return undefined;
  for (const char of code) if (!USER_CODE_ALPHABET.includes(char)) return undefined;
  return code;
}
