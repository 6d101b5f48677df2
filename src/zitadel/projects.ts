import { z } from 'zod';
import { enumField, PRIVATE_LABELING_SETTING } from './enums.js';
import { flag, requiredText } from './validation.js';

/** Which org's branding a project's login shows: Sesame has one look, so any choice is refused. */
export const NO_PRIVATE_LABELING = 'not supported by Sesame, which has no label policies (branding)';

/** AddProjectRequest, also the `project` of an import bundle's `projects[]`. */
export const addProjectSchema = z.object({
  name: requiredText(200),
  projectRoleAssertion: flag(),
  projectRoleCheck: flag(),
  hasProjectCheck: flag(),
  privateLabelingSetting: enumField(PRIVATE_LABELING_SETTING),
});

