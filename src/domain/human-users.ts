/**
 * ZITADEL's EmailRegex (HTML5 style): what a new person's email must match.
 *
 * This module holds what a new person's fields must satisfy wherever they come from (the
 * management API, the organization import, self-registration). The record itself is made by the
 * users' owner, OrgsActor.addUser (src/actors/new-human.ts), so no caller can set counters or factors.
 */
export const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
/** Hashing cost grows with length; nobody types more than this. */
export const MAX_PASSWORD = 1024;
