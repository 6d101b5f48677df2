import { describe, expect, it } from 'vitest';
import { globMatches } from '../../src/protocol/authorize/redirect-uri.js';

/** Dev-mode redirect URI globs (compat §2.3): `*` within a path segment, `**` across segments. */
describe('redirect URI globs', () => {
  const cases: [string, string, boolean][] = [
    ['http://localhost:*/cb', 'http://localhost:3000/cb', true],
    ['http://localhost:*/cb', 'http://localhost:3000/x/cb', false],
    ['https://*.example.com/cb', 'https://a.example.com/cb', true],
    ['https://*.example.com/cb', 'https://evil.com/.example.com/cb', false],
    ['https://app.example/**', 'https://app.example/a/b/c', true],
    ['https://app.example/**', 'https://app.example/', true],
    ['https://app.example/*/done', 'https://app.example//done', true],
    ['https://app.example/a*b', 'https://app.example/ab', true],
    ['https://app.example/a*b', 'https://app.example/a/b', false],
    ['https://app.example/cb', 'https://app.example/cb', true],
    ['https://app.example/cb', 'https://app.example/cb2', false],
    ['https://a.example/x.y', 'https://a.example/xzy', false],
  ];
  it.each(cases)('%s ~ %s: %s', (pattern, uri, expected) => {
    expect(globMatches(pattern, uri)).toBe(expected);
  });

  it('answers a pattern that makes a backtracking regex explode, for a long attacker-chosen URI', () => {
    // As a RegExp (`^.*a.*a…$`) this takes polynomial time in the URI's length; the table walk is linear in each.
    const pattern = `https://app.example/${'**a'.repeat(12)}z`;
    const uri = `https://app.example/${'a'.repeat(4000)}`;
    expect(globMatches(pattern, uri)).toBe(false);
    expect(globMatches(pattern, `${uri}z`)).toBe(true);
  });
});
