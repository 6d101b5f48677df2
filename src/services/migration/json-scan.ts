/**
 * A validating JSON scanner over a UTF-8 buffer that finds the byte ranges of values without
 * building them, so that a large import bundle is checked once and then parsed piece by piece
 * (one JSON.parse per organization field or list element) instead of as one huge object graph.
 * Iterative (an explicit nesting stack), so hostile nesting cannot exhaust the call stack.
 */
export interface Span {
  /** Offset of the value's first byte. */
  start: number;
  /** Offset just after its last byte. */
  end: number;
}

export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at byte ${offset}`);
  }
}

const MAX_DEPTH = 512;
/**
 * While checking the document, the ends of containers this shallow are remembered (request →
 * bundle → orgs → org → list → element), so walking them later does not scan their bytes again.
 */
const REMEMBER_DEPTH = 6;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
// The four escapes JSON allows after a backslash besides `u`.
const SIMPLE_ESCAPES = new Set([QUOTE, BACKSLASH, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

export class JsonScanner {
  /** Container start offset → end offset, for shallow containers of a checked document. */
  private readonly ends = new Map<number, number>();

  constructor(readonly buf: Buffer) {}

  /** The first offset at or after `pos` that is not JSON whitespace. */
  skipWs(pos: number): number {
    const buf = this.buf;
    while (pos < buf.length) {
      const c = buf[pos]!;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    return pos;
  }

  private fail(message: string, pos: number): never {
    throw new JsonSyntaxError(pos >= this.buf.length ? 'unexpected end of JSON input' : message, pos);
  }

  /** Checks the document is exactly one JSON value (with surrounding whitespace); returns its span. */
  document(): Span {
    const start = this.skipWs(0);
    if (start >= this.buf.length) this.fail('empty document', start);
    const end = this.skipValue(start, true);
    const rest = this.skipWs(end);
    if (rest !== this.buf.length) this.fail('unexpected data after the JSON value', rest);
    return { start, end };
  }

  /**
   * Validates the value starting at `pos` and returns the offset just after it. With `remember`
   * (the document check), the ends of shallow containers are kept for later walks.
   */
  skipValue(pos: number, remember = false): number {
    const buf = this.buf;
    pos = this.skipWs(pos);
    const known = this.ends.get(pos);
    if (known !== undefined) return known;
    // Open containers: true = object, false = array; and where each began.
    const stack: boolean[] = [];
    const starts: number[] = [];
    for (;;) {
      // A value is expected at pos.
      pos = this.skipWs(pos);
      const c = buf[pos];
      if (c === LBRACE || c === LBRACKET) {
        if (stack.length >= MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels`, pos);
        const isObject = c === LBRACE;
        const start = pos;
        pos = this.skipWs(pos + 1);
        if (buf[pos] === (isObject ? RBRACE : RBRACKET)) {
          pos++;
        } else {
          stack.push(isObject);
          starts.push(start);
          if (isObject) pos = this.skipKey(pos);
          continue;
        }
      } else if (c === QUOTE) {
        pos = this.skipString(pos);
      } else if (c === MINUS || (c !== undefined && isDigit(c))) {
        pos = this.skipNumber(pos);
      } else if (c === 0x74) {
        pos = this.skipLiteral(pos, 'true');
      } else if (c === 0x66) {
        pos = this.skipLiteral(pos, 'false');
      } else if (c === 0x6e) {
        pos = this.skipLiteral(pos, 'null');
      } else {
        this.fail('unexpected character, a value was expected', pos);
      }
      // After a value: close containers or move to the next member/element.
      for (;;) {
        if (stack.length === 0) return pos;
        pos = this.skipWs(pos);
        const isObject = stack[stack.length - 1]!;
        const d = buf[pos];
        if (d === COMMA) {
          pos = this.skipWs(pos + 1);
          if (isObject) pos = this.skipKey(pos);
          break;
        }
        if (d === (isObject ? RBRACE : RBRACKET)) {
          stack.pop();
          const start = starts.pop()!;
          pos++;
          if (remember && stack.length < REMEMBER_DEPTH) this.ends.set(start, pos);
          continue;
        }
        this.fail(isObject ? 'expected "," or "}"' : 'expected "," or "]"', pos);
      }
    }
  }

  /** A member name and its colon; returns the offset after the colon. */
  private skipKey(pos: number): number {
    if (this.buf[pos] !== QUOTE) this.fail('expected a string member name', pos);
    pos = this.skipWs(this.skipString(pos));
    if (this.buf[pos] !== COLON) this.fail('expected ":"', pos);
    return pos + 1;
  }

  skipString(pos: number): number {
    const buf = this.buf;
    pos++;
    for (;;) {
      // Fast path: jump to the next quote, then check what lies before it.
      const quote = buf.indexOf(QUOTE, pos);
      if (quote === -1) this.fail('unterminated string', buf.length);
      let escaped = false;
      for (let i = pos; i < quote; i++) {
        const c = buf[i]!;
        if (c < 0x20) this.fail('control character in string', i);
        if (c === BACKSLASH) {
          const e = buf[i + 1]!;
          if (e === 0x75) {
            for (let k = 2; k < 6; k++) if (!isHex(buf[i + k] ?? 0)) this.fail('bad \\u escape', i);
            i += 5;
          } else if (SIMPLE_ESCAPES.has(e)) {
            i += 1;
          } else if (i + 1 >= buf.length) {
            this.fail('unterminated string', buf.length);
          } else {
            this.fail('bad escape', i);
          }
          // An escape may swallow the quote we found (\"): continue after it.
          if (i >= quote) {
            escaped = true;
            pos = i + 1;
            break;
          }
        }
      }
      if (!escaped) return quote + 1;
    }
  }

  private skipNumber(pos: number): number {
    const buf = this.buf;
    const start = pos;
    if (buf[pos] === MINUS) pos++;
    if (buf[pos] === 0x30) pos++;
    else if (isDigit(buf[pos] ?? 0)) while (isDigit(buf[pos] ?? 0)) pos++;
    else this.fail('bad number', start);
    if (buf[pos] === DOT) {
      pos++;
      if (!isDigit(buf[pos] ?? 0)) this.fail('bad number', start);
      while (isDigit(buf[pos] ?? 0)) pos++;
    }
    if (buf[pos] === 0x65 || buf[pos] === 0x45) {
      pos++;
      if (buf[pos] === PLUS || buf[pos] === MINUS) pos++;
      if (!isDigit(buf[pos] ?? 0)) this.fail('bad number', start);
      while (isDigit(buf[pos] ?? 0)) pos++;
    }
    return pos;
  }

  private skipLiteral(pos: number, literal: string): number {
    for (let i = 0; i < literal.length; i++) {
      if (this.buf[pos + i] !== literal.charCodeAt(i)) this.fail(`unexpected token, "${literal}" expected`, pos);
    }
    return pos + literal.length;
  }

  kind(span: Span): JsonKind {
    const c = this.buf[span.start];
    if (c === LBRACE) return 'object';
    if (c === LBRACKET) return 'array';
    if (c === QUOTE) return 'string';
    if (c === 0x74 || c === 0x66) return 'boolean';
    if (c === 0x6e) return 'null';
    return 'number';
  }

  /** The members of an object span: decoded names with their value spans, in document order. */
  *members(span: Span): Generator<{ key: string; value: Span }> {
    let pos = this.skipWs(span.start + 1);
    if (this.buf[pos] === RBRACE) return;
    for (;;) {
      const keyEnd = this.skipString(pos);
      const key = JSON.parse(this.buf.toString('utf8', pos, keyEnd)) as string;
      const valueStart = this.skipWs(this.skipWs(keyEnd) + 1);
      const valueEnd = this.skipValue(valueStart);
      yield { key, value: { start: valueStart, end: valueEnd } };
      pos = this.skipWs(valueEnd);
      if (this.buf[pos] !== COMMA) return;
      pos = this.skipWs(pos + 1);
    }
  }

  /** The element spans of an array span. */
  *elements(span: Span): Generator<Span> {
    let pos = this.skipWs(span.start + 1);
    if (this.buf[pos] === RBRACKET) return;
    for (;;) {
      const end = this.skipValue(pos);
      yield { start: pos, end };
      pos = this.skipWs(end);
      if (this.buf[pos] !== COMMA) return;
      pos = this.skipWs(pos + 1);
    }
  }

  /** JSON.parse of one span. */
  parse(span: Span): unknown {
    return JSON.parse(this.buf.toString('utf8', span.start, span.end));
  }
}
