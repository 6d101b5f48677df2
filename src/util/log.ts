/** Structured one-line JSON logs on stderr; the hot path never builds log strings unless enabled. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

let threshold = ORDER.info;
/** Where the lines go: stderr, unless something embedding Sesame (the in-process tests) takes them. */
let sink: ((line: string) => void) | undefined;

/** Sends every line written from now on to `to` instead of stderr; `undefined` puts stderr back. */
export function setLogSink(to: ((line: string) => void) | undefined): void {
  sink = to;
}

export function setLogLevel(level: LogLevel): void {
  threshold = ORDER[level];
}

function write(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
  if (ORDER[level] < threshold) return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields });
  if (sink) sink(line);
  else process.stderr.write(`${line}\n`);
}

/** Writes a line another thread formatted (an HTTP acceptor thread's) where this thread's lines go. */
export function writeLogLine(line: string): void {
  if (sink) sink(line);
  else process.stderr.write(`${line}\n`);
}

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => write('debug', msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write('info', msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write('warn', msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write('error', msg, fields),
};
