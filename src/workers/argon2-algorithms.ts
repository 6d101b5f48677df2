import type { Algorithm } from '@node-rs/argon2';

/**
 * @node-rs/argon2's `Algorithm` is a const enum, which a module compiled one file at a time
 * (verbatimModuleSyntax) cannot read: its values, as the package declares them, typed as its enum.
 */
export const ARGON2 = { Argon2d: 0 as Algorithm, Argon2i: 1 as Algorithm, Argon2id: 2 as Algorithm } as const;
