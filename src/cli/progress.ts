export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** Progress of uploads, downloads and file reads on stderr: one line, redrawn in place, only when stderr is a terminal. */
export class Progress {
  private readonly tty = process.stderr.isTTY === true;
  private lastDraw = 0;
  private drawn = false;

  constructor(private readonly label: string) {}

  update(text: string): void {
    if (!this.tty) return;
    const now = Date.now();
    if (now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const line = `sesame: ${this.label} ${text}`.slice(0, Math.max(20, (process.stderr.columns ?? 80) - 1));
    process.stderr.write(`\r\x1b[K${line}`);
    this.drawn = true;
  }

  bytes(done: number, total?: number): void {
    this.update(total ? `${formatBytes(done)} of ${formatBytes(total)} (${Math.floor((done / total) * 100)}%)` : formatBytes(done));
  }

  /** Clears the line before the summary. */
  done(): void {
    if (this.drawn) process.stderr.write('\r\x1b[K');
    this.drawn = false;
  }
}
