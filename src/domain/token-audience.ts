import type { AppRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

/**
 * Whether a token whose audience is `aud` is for `app` (introspection, token exchange): its client
 * id, or its project, whose apps share their tokens as in ZITADEL. A self-registered client is a
 * stranger to the project it was put in (anyone may have registered the others): only its own
 * client id counts, and it is not in the default audience of the project's other apps either.
 */
export function audienceIncludesApp(aud: readonly string[], app: View<AppRecord>): boolean {
  return aud.includes(app.clientId) || (app.registration === undefined && aud.includes(app.projectId));
}
