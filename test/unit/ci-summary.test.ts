import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The CI summary (.ci/summary.mjs) on vitest JSON reports shaped as vitest 4 writes them. The
 * closing line counts tests: a failing test inside nested describes is one failure (the summary
 * used to add the failed suites, three for it); a file failing outside its tests is reported on
 * its own line and fails the run.
 */
const dir = mkdtempSync(join(tmpdir(), 'sesame-ci-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const root = new URL('../../', import.meta.url).pathname;

type Assertion = { status: 'passed' | 'failed' | 'skipped'; title: string; fullName?: string; failureMessages?: string[] };
const file = (name: string, status: 'passed' | 'failed', assertionResults: Assertion[], message = '') => ({ name: join(root, name), status, message, assertionResults });

function summarize(files: ReturnType<typeof file>[], vitestStatus: number, suites = { numFailedTestSuites: 0 }): { lines: string[]; status: number } {
  const all = files.flatMap((f) => f.assertionResults);
  const report = {
    numTotalTestSuites: files.length,
    ...suites,
    numTotalTests: all.length,
    numPassedTests: all.filter((a) => a.status === 'passed').length,
    numFailedTests: all.filter((a) => a.status === 'failed').length,
    numPendingTests: all.filter((a) => a.status === 'skipped').length,
    success: vitestStatus === 0,
    testResults: files,
  };
  const path = join(dir, `report-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(report));
  try {
    const out = execFileSync(process.execPath, ['.ci/summary.mjs', path, String(vitestStatus)], { cwd: root, encoding: 'utf8' });
    return { lines: out.trim().split('\n'), status: 0 };
  } catch (error) {
    const e = error as { status: number; stdout: string };
    return { lines: e.stdout.trim().split('\n'), status: e.status };
  }
}

describe('CI summary', () => {
  it('counts one failing test in nested describes as one failure', () => {
    const result = summarize(
      [
        file('test/a.test.ts', 'failed', [
          { status: 'failed', title: 'fails', fullName: 'outer inner fails', failureMessages: ['AssertionError: expected 1 to be 2\n    at a.test.ts:3'] },
          { status: 'passed', title: 'passes' },
        ]),
        file('test/b.test.ts', 'passed', [{ status: 'passed', title: 'ok' }]),
      ],
      1,
      { numFailedTestSuites: 3 },
    );
    // The failed test is named (CI keeps the tail of the output) with the first line of its failure.
    expect(result).toEqual({ lines: ['failed: test/a.test.ts > outer inner fails: AssertionError: expected 1 to be 2', '2 passed, 1 failed'], status: 1 });
  });

  it('reports a file that did not load, and one whose setup failed, on their own lines and fails the run', () => {
    const result = summarize(
      [
        file('test/broken.test.ts', 'failed', [], "Cannot find module './gone.js'\n  at somewhere"),
        file(
          'test/hook.test.ts',
          'failed',
          [
            { status: 'skipped', title: 'one' },
            { status: 'skipped', title: 'two' },
          ],
          'setup broke',
        ),
        file('test/fine.test.ts', 'passed', [{ status: 'passed', title: 'ok' }]),
      ],
      1,
    );
    expect(result.status).toBe(1);
    expect(result.lines).toEqual([
      "test file failed outside its tests: test/broken.test.ts: Cannot find module './gone.js'",
      'test file failed outside its tests: test/hook.test.ts: setup broke (2 of its tests did not run)',
      '1 passed, 0 failed',
    ]);
  });

  it('passes a green run, and fails one vitest failed without a failed test', () => {
    const green = [file('test/fine.test.ts', 'passed', [{ status: 'passed', title: 'ok' }])];
    expect(summarize(green, 0)).toEqual({ lines: ['1 passed, 0 failed'], status: 0 });
    const unhandled = summarize(green, 1);
    expect(unhandled.status).toBe(1);
    expect(unhandled.lines.at(-1)).toBe('1 passed, 0 failed');
    expect(unhandled.lines[0]).toMatch(/vitest exited with status 1/);
    expect(summarize([], 0)).toEqual({ lines: ['no tests ran', '0 passed, 0 failed'], status: 1 });
  });
});
