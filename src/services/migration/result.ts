import { ApiError } from '../../model/errors.js';
import { log } from '../../util/log.js';

/**
 * ImportDataResponse (docs/compatibility.md §1.2): `errors[]` with ZITADEL's type and id conventions and message
 * `ID=<error id> Message=<text>`, and per org the ids of what was imported.
 */
export interface ImportErrorItem {
  type: string;
  id: string;
  message: string;
}

export interface SuccessOrg {
  orgId: string;
  projectIds: string[];
  projectRoles: string[];
  oidcAppIds: string[];
  apiAppIds: string[];
  humanUserIds: string[];
  machineUserIds: string[];
  userGrants: { projectId: string; userId: string }[];
  orgMembers: string[];
  projectMembers: { projectId: string; userId: string }[];
  userMetadata: { userId: string; key: string }[];
  domains: string[];
  appKeys: string[];
  machineKeys: string[];
  /** ZITADEL's name, typo kept (docs/compatibility.md §1.2): the identity providers imported. */
  oidcIpds: string[];
  userLinks: { userId: string; externalUserId: string; displayName: string; idpId: string }[];
}

export function newSuccessOrg(orgId: string): SuccessOrg {
  return {
    orgId,
    projectIds: [],
    projectRoles: [],
    oidcAppIds: [],
    apiAppIds: [],
    humanUserIds: [],
    machineUserIds: [],
    userGrants: [],
    orgMembers: [],
    projectMembers: [],
    userMetadata: [],
    domains: [],
    oidcIpds: [],
    userLinks: [],
    appKeys: [],
    machineKeys: [],
  };
}

export class ImportReport {
  readonly errors: ImportErrorItem[] = [];
  readonly orgs: SuccessOrg[] = [];

  error(type: string, id: string, errorId: string, message: string): void {
    this.errors.push({ type, id, message: `ID=${errorId} Message=${message}` });
  }

  /** Records a failure thrown while importing one item (ApiErrors keep their id and text). */
  failure(type: string, id: string, error: unknown): void {
    if (error instanceof ApiError) {
      this.error(type, id, error.errorId, error.message);
      return;
    }
    log.error('import: unexpected failure', { type, id, error: error instanceof Error ? error.stack : String(error) });
    this.error(type, id, 'IMPORT-Int01', 'internal error');
  }

  toJSON() {
    return { errors: this.errors, success: { orgs: this.orgs } };
  }
}
