import { usage } from './errors.js';

/** Command-line options: `--flag value`, `--flag=value`, booleans; the rest are server settings for offline work. */
export interface Parsed {
  values: Map<string, string[]>;
  flags: Set<string>;
  /** Options this command does not know: server settings for offline work (`--master-key x`). */
  rest: string[];
  positional: string[];
}

export function parseArgs(argv: readonly string[], valued: readonly string[], booleans: readonly string[]): Parsed {
  const out: Parsed = { values: new Map(), flags: new Set(), rest: [], positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      out.flags.add('--help');
      continue;
    }
    if (!arg.startsWith('--') || arg === '-') {
      out.positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (booleans.includes(name)) {
      if (eq !== -1) throw usage(`option ${name} takes no value`);
      out.flags.add(name);
    } else if (valued.includes(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined) throw usage(`option ${name} needs a value`);
      out.values.set(name, [...(out.values.get(name) ?? []), value]);
    } else {
      // Every server setting takes a value: keep the pair for loadConfig, which checks it.
      out.rest.push(arg);
      if (eq === -1 && i + 1 < argv.length) out.rest.push(argv[++i]!);
    }
  }
  return out;
}

export const last = (p: Parsed, name: string) => p.values.get(name)?.at(-1);
export const envValue = (name: string) => (process.env[name] === '' ? undefined : process.env[name]);
