import { recordKind, type StorePort } from '../storage/store-port.js';
import { clock } from '../util/clock.js';
import { newUniqueId } from '../util/ids.js';

/**
 * Imports that run after their request is answered (the console's upload, Sesame's
 * `POST /admin/v1/imports`), as records in the store: whichever thread or node a poll reaches reads
 * the same progress, and the report once the import is over. The thread that runs an import writes
 * its record: at each org and phase, and every second or so in between (its heartbeat); a record
 * left `running` without a heartbeat for STALL_MS belonged to a process that stopped.
 */
export type ImportPhase = 'waiting' | 'orgs' | 'grants' | 'members';

export interface ImportProgress {
  phase: ImportPhase;
  orgsTotal: number;
  /** Orgs whose objects (phase 1) are committed or refused. */
  orgsDone: number;
  /** Objects committed so far: people and machine users, projects, apps. */
  users: number;
  projects: number;
  apps: number;
  errors: number;
}

export interface ImportJob {
  id: string;
  /** Who started it (a user id). */
  by: string;
  bytes: number;
  startedAt: number;
  /** The last write of the thread running it (clock ms). */
  updatedAt: number;
  state: 'running' | 'done' | 'failed';
  progress: ImportProgress;
  /** ImportData's answer, once done. */
  report?: unknown;
  /** Why it stopped, once failed (a ZITADEL error's code name, id and text). */
  error?: { code: string; id: string; message: string };
}

/** What a poll shows: `interrupted` when the process running it stopped before it was over. */
export type ImportJobState = ImportJob['state'] | 'interrupted';

/** Without a heartbeat this long, a running import's process is gone. */
export const STALL_MS = 5 * 60 * 1000;
/** Imports are kept this long after their last write (their reports), then removed when another starts. */
export const KEEP_MS = 7 * 24 * 60 * 60 * 1000;
/** At most one progress write a second (real time: a rate, not a lifetime). */
const HEARTBEAT_MS = 1000;
/** A heartbeat at least this often while the import lives, progress or not (waiting, reading the bundle). */
const ALIVE_MS = 60 * 1000;
/** The recent imports a listing shows. */
export const LISTED = 50;

const JOBS = recordKind<ImportJob>('importJobs');

export function importJobState(job: ImportJob, now: number): ImportJobState {
  return job.state === 'running' && now - job.updatedAt > STALL_MS ? 'interrupted' : job.state;
}

export const NO_PROGRESS: ImportProgress = { phase: 'waiting', orgsTotal: 0, orgsDone: 0, users: 0, projects: 0, apps: 0, errors: 0 };

/** The writes of one running import: progress throttled, one write at a time, the last one always written. */
export class RunningImport {
  private written = 0;
  private pending: ImportProgress | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** The heartbeat while nothing else is written; it keeps no process alive. */
  private readonly alive: NodeJS.Timeout;

  constructor(
    private readonly store: StorePort,
    readonly id: string,
  ) {
    this.alive = setInterval(() => {
      if (Date.now() - this.written < ALIVE_MS) return;
      this.written = Date.now();
      this.flush(true);
    }, ALIVE_MS);
    this.alive.unref();
  }

  /** The progress now; written at once when `boundary` (an org or phase done), else at most once a second. */
  progress(progress: ImportProgress, boundary = false): void {
    this.pending = progress;
    if (!boundary && Date.now() - this.written < HEARTBEAT_MS) return;
    this.written = Date.now();
    this.flush();
  }

  /** The import is over: its report, or why it failed. Resolves once written. */
  async finish(outcome: { report: unknown } | { error: NonNullable<ImportJob['error']> }): Promise<void> {
    clearInterval(this.alive);
    await this.writing;
    const last = this.pending;
    await this.store.durable(
      this.store.update(JOBS, this.id, (job) =>
        job
          ? {
              ...job,
              ...(last ? { progress: last } : {}),
              updatedAt: clock.now(),
              ...('report' in outcome ? { state: 'done' as const, report: outcome.report } : { state: 'failed' as const, error: outcome.error }),
            }
          : undefined,
      ),
    );
  }

  /** Writes the progress told since the last write; `beat`: the time of life even without any. */
  private flush(beat = false): void {
    this.writing = this.writing.then(async () => {
      const progress = this.pending;
      if (!progress && !beat) return;
      this.pending = undefined;
      // A lost heartbeat is not the import's failure: the next one (or the finish) writes again.
      await this.store.update(JOBS, this.id, (job) => (job?.state === 'running' ? { ...job, ...(progress ? { progress } : {}), updatedAt: clock.now() } : undefined)).catch(() => undefined);
    });
  }
}

export class ImportJobsActor {
  constructor(private readonly store: StorePort) {}

  /** Records a new import as running (durably, before it is answered); old finished ones go. */
  async start(by: string, bytes: number): Promise<RunningImport> {
    const now = clock.now();
    // A running job writes every second or so: one this old is over, or was interrupted.
    await this.store.sweep(JOBS, (job) => now - job.updatedAt > KEEP_MS);
    const id = newUniqueId(); // several threads and nodes start imports: no unique key catches a clash
    await this.store.durable(this.store.put(JOBS, id, { id, by, bytes, startedAt: now, updatedAt: now, state: 'running', progress: NO_PROGRESS }));
    return new RunningImport(this.store, id);
  }

  get(id: string): Promise<ImportJob | undefined> {
    return this.store.get(JOBS, id);
  }

  /** The newest imports first. */
  async recent(): Promise<ImportJob[]> {
    const all = await this.store.range(JOBS, '');
    return all
      .map((entry) => entry.value)
      .sort((a, b) => b.startedAt - a.startedAt)
      .slice(0, LISTED);
  }
}
