import { invalidArgument } from '../model/errors.js';
import { importProblem } from '../crypto/passwords/registry.js';

/**
 * Checks an encoded hash given to ImportHumanUser or the admin import (docs/compatibility.md §1.3): a format
 * Sesame reads, within ZITADEL's cost bounds and within what Sesame spends on one verification
 * (src/crypto/passwords/cost.ts). Throws `Errors.Hash.NotSupported` or `Errors.User.Password.Invalid`;
 * the hash is stored as given.
 */
export function checkEncodedHash(encoded: string): void {
  const problem = importProblem(encoded);
  if (!problem) return;
  switch (problem.kind) {
    case 'unsupported':
      throw invalidArgument('CRYPT-Hash1', 'hashedPassword: unsupported or malformed hash format (Errors.Hash.NotSupported)');
    case 'bounds':
      throw invalidArgument('USER-Pw4rd', `hashedPassword: ${problem.format} cost parameters out of bounds (${problem.reason}) (Errors.User.Password.Invalid)`);
    case 'cost':
      throw invalidArgument('USER-Pw4rc', `hashedPassword: ${problem.reason} (Errors.User.Password.Invalid)`);
  }
}
