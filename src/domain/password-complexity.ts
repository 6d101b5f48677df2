import { invalidArgument } from '../model/errors.js';
import type { PasswordComplexityPolicy } from '../model/records.js';
import type { View } from '../util/readonly.js';
import { MAX_PASSWORD } from './human-users.js';

/**
 * The password complexity policy as one pure rule (ZITADEL's PasswordComplexityPolicy.Check):
 * which rule a new password breaks, first the length, then the character classes. Every place a
 * password is set asks it: registration, a required change, a reset, an administrator, an import's
 * plain password. Hashes imported as they are cannot be checked and are not.
 */
export type ComplexityRule = 'minLength' | 'maxLength' | 'hasUppercase' | 'hasLowercase' | 'hasNumber' | 'hasSymbol';

/** ZITADEL's classes: a symbol is anything that is neither a letter nor a digit. */
const UPPER = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;
const NUMBER = /\p{Nd}/u;
const SYMBOL = /[^\p{L}\p{Nd}]/u;

export function brokenComplexityRule(password: string, policy: View<PasswordComplexityPolicy>): ComplexityRule | undefined {
  // Counted in code points, as a person counts characters.
  const length = [...password].length;
  if (length < policy.minLength) return 'minLength';
  if (password.length > MAX_PASSWORD) return 'maxLength';
  if (policy.hasUppercase && !UPPER.test(password)) return 'hasUppercase';
  if (policy.hasLowercase && !LOWER.test(password)) return 'hasLowercase';
  if (policy.hasNumber && !NUMBER.test(password)) return 'hasNumber';
  if (policy.hasSymbol && !SYMBOL.test(password)) return 'hasSymbol';
  return undefined;
}

/** The rule in English, for API errors and import reports. */
export function complexityRuleText(rule: ComplexityRule, policy: View<PasswordComplexityPolicy>): string {
  switch (rule) {
    case 'minLength':
      return `at least ${policy.minLength} characters`;
    case 'maxLength':
      return `at most ${MAX_PASSWORD} characters`;
    case 'hasUppercase':
      return 'an uppercase letter';
    case 'hasLowercase':
      return 'a lowercase letter';
    case 'hasNumber':
      return 'a number';
    case 'hasSymbol':
      return 'a symbol (neither a letter nor a number)';
  }
}

/** ZITADEL's error ids per rule (Errors.User.PasswordComplexityPolicy.*). */
const RULE_IDS: Record<ComplexityRule, string> = {
  minLength: 'DOMAIN-HuJf6',
  maxLength: 'DOMAIN-HuJf7',
  hasUppercase: 'DOMAIN-1HeHs',
  hasLowercase: 'DOMAIN-ZDLwA',
  hasNumber: 'DOMAIN-FBCJ2',
  hasSymbol: 'DOMAIN-QWn3u',
};

/** Throws InvalidArgument naming the broken rule (API callers and the import). */
export function requireComplexPassword(password: string, policy: View<PasswordComplexityPolicy>): void {
  const rule = brokenComplexityRule(password, policy);
  if (rule)
    throw invalidArgument(RULE_IDS[rule], `the password does not meet the password complexity policy: it needs ${complexityRuleText(rule, policy)} (Errors.User.PasswordComplexityPolicy.${rule})`);
}
