/**
 * A phone number as the login looks it up: `+` and 3 to 20 digits, the usual separators (spaces,
 * dashes, dots, brackets) dropped; undefined for anything else. The API refuses numbers without one,
 * so a number stored as verified always signs its person in.
 */
export function phoneDigits(phone: string): string | undefined {
  const digits = phone.trim().replace(/[\s\-().]/g, '');
  return /^\+\d{3,20}$/.test(digits) ? digits : undefined;
}
