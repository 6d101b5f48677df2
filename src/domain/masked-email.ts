/**
 * An address as a page shows it to whoever is at a sign-in step: enough to recognise one's own
 * (first letter, domain), not enough to learn someone else's.
 */
export function maskedEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '';
  return `${email[0]}•••${email.slice(at)}`;
}
