import { z } from 'zod';
import { enumField, PRIVATE_LABELING_SETTING } from './enums.js';
import { flag, requiredText } from './validation.js';
import { resourceUriProblem } from '../protocol/resource-indicators.js';

/** How many resource URIs one project registers at most. */
export const MAX_PROJECT_RESOURCE_URIS = 20;

/** A project's resource indicators (RFC 8707; Sesame's field): absolute URIs without fragments, each once. */
const resourceUris = z
  .array(z.string().max(2048))
  .max(MAX_PROJECT_RESOURCE_URIS, `at most ${MAX_PROJECT_RESOURCE_URIS} resource URIs per project`)
  .superRefine((uris, ctx) => {
    uris.forEach((uri, i) => {
      const problem = resourceUriProblem(uri);
      if (problem) ctx.addIssue({ code: 'custom', path: [i], message: `resource URI ${problem}` });
      else if (uris.indexOf(uri) !== i) ctx.addIssue({ code: 'custom', path: [i], message: 'resource URI is listed twice' });
    });
  });

/**
 * AddProjectRequest, also UpdateProjectRequest (the same fields) and the `project` of an import
 * bundle's `projects[]`; `resourceUris` is Sesame's.
 */
export const addProjectSchema = z.object({
  name: requiredText(200),
  projectRoleAssertion: flag(),
  projectRoleCheck: flag(),
  hasProjectCheck: flag(),
  privateLabelingSetting: enumField(PRIVATE_LABELING_SETTING),
  resourceUris: resourceUris.optional(),
});
