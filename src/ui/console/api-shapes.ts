/**
 * What the console's pages render: the JSON the management, admin and auth APIs answer (ZITADEL's
 * shapes, zero values left out), only the fields the pages read.
 */
export interface Details {
  sequence?: string;
  creationDate?: string;
  changeDate?: string;
  resourceOwner?: string;
}

export interface UserView {
  id: string;
  details?: Details;
  state?: string;
  userName: string;
  loginNames?: string[];
  preferredLoginName?: string;
  human?: {
    profile?: { firstName?: string; lastName?: string; displayName?: string; preferredLanguage?: string };
    email?: { email?: string; isEmailVerified?: boolean };
    phone?: { phone?: string; isPhoneVerified?: boolean };
  };
  machine?: { name?: string; description?: string; hasSecret?: boolean; accessTokenType?: string };
}

export interface OrgView {
  id: string;
  details?: Details;
  state?: string;
  name: string;
  primaryDomain?: string;
}

export interface ProjectView {
  id: string;
  details?: Details;
  name: string;
  state?: string;
  projectRoleAssertion?: boolean;
  projectRoleCheck?: boolean;
}

export interface RoleView {
  key: string;
  displayName?: string;
  group?: string;
}

export interface AppView {
  id: string;
  details?: Details;
  state?: string;
  name: string;
  oidcConfig?: {
    clientId?: string;
    redirectUris?: string[];
    postLogoutRedirectUris?: string[];
    appType?: string;
    authMethodType?: string;
    grantTypes?: string[];
    devMode?: boolean;
  };
  apiConfig?: { clientId?: string; authMethodType?: string };
}

export interface PatView {
  id: string;
  details?: Details;
  expirationDate?: string;
}

/** A machine user's or an app's key (ListMachineKeys, ListAppKeys): no private part. */
export interface KeyView {
  id: string;
  details?: Details;
  type?: string;
  expirationDate?: string;
}

/** One metadata entry (ListUserMetadata): the value is base64 of bytes. */
export interface MetadataView {
  key: string;
  value: string;
  details?: Details;
}

export interface EventView {
  sequence?: string;
  creationDate?: string;
  type?: { type?: string; localized?: { localizedMessage?: string } };
  aggregate?: { id?: string; type?: { type?: string }; resourceOwner?: string };
  editor?: { userId?: string; displayName?: string; service?: string; address?: string };
  payload?: unknown;
}

/** A person's browser session as ZITADEL's v2 ListSessions answers it. */
export interface UserSessionView {
  id: string;
  creationDate?: string;
  changeDate?: string;
}

/** One member of an org or of the instance (ListOrgMembers, ListIAMMembers). */
export interface MemberView {
  userId: string;
  roles: string[];
  details?: Details;
  preferredLoginName?: string;
  displayName?: string;
  userType?: string;
}

export interface MembershipView {
  iam?: boolean;
  orgId?: string;
  projectId?: string;
  displayName?: string;
  roles: string[];
}

/** A change of one object, as the management API's `…/changes/_search` answers it. */
export interface ChangeView {
  changeDate?: string;
  eventType?: { key?: string; localizedMessage?: string };
  sequence?: string;
  editorId?: string;
  editorDisplayName?: string;
  editorPreferredLoginName?: string;
}

/** A second factor as ListMyAuthFactors and ListHumanAuthFactors answer it (one of otp, otpEmail, u2f). */
export interface FactorView {
  otp?: Record<string, never>;
  otpEmail?: Record<string, never>;
  u2f?: { id: string; name?: string };
}

/** A passkey (ZITADEL's passwordless token). */
export interface PasskeyView {
  id: string;
  name?: string;
}

/** A link to an account at an identity provider. */
export interface LinkView {
  idpId: string;
  idpName?: string;
  providedUserId: string;
  providedUserName?: string;
}

/** A user grant: a user's roles on a project. */
export interface GrantView {
  id: string;
  projectId: string;
  projectName?: string;
  roleKeys?: string[];
}
