/** A command's failure: one line on stderr, exit 2 for usage and settings, 1 for failures. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}
export const usage = (message: string) => new CliError(message, 2);
export const failure = (message: string) => new CliError(message, 1);
