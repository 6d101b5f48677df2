import type { HumanData, HumanProfile, UserState } from '../model/records.js';

/**
 * A new person's record, one rule for every way a person is created (the management API's
 * AddHumanUser and ImportHumanUser, the organization import, self-registration): the display
 * name defaulted, the failure counters at zero, the state ZITADEL gives. Applied by OrgsActor,
 * the owner of users, so callers hand in what the person is, never a finished record.
 */
export interface NewHuman {
  userName: string;
  profile: Omit<HumanProfile, 'displayName'> & { displayName?: string | undefined };
  email: { email: string; isEmailVerified: boolean };
  phone?: { phone: string; isPhoneVerified: boolean } | undefined;
}

export interface HumanCredentials {
  /** Encoded hash (Sesame's own or an imported format already checked). */
  passwordHash?: string | undefined;
  passwordChangeRequired?: boolean;
  otpSecretSealed?: Uint8Array | undefined;
  /** The import's state, when it names one; otherwise the state follows from the credentials. */
  state?: UserState | undefined;
}

/** The user record's fields for a new person: display name defaulted, counters at zero, state as ZITADEL sets it. */
export function newHuman(input: NewHuman, credentials: HumanCredentials): { userName: string; state: UserState; human: HumanData } {
  const { profile } = input;
  return {
    userName: input.userName,
    state: credentials.state ?? initialState(credentials.passwordHash !== undefined),
    human: {
      profile: { ...profile, displayName: profile.displayName || `${profile.firstName} ${profile.lastName}` },
      email: input.email,
      ...(input.phone?.phone ? { phone: input.phone } : {}),
      ...(credentials.passwordHash ? { passwordHash: credentials.passwordHash } : {}),
      passwordChangeRequired: credentials.passwordChangeRequired ?? false,
      ...(credentials.otpSecretSealed ? { otpSecretSealed: credentials.otpSecretSealed } : {}),
      failedPasswordAttempts: 0,
    },
  };
}

/** ZITADEL: a human who cannot log in yet (no password, passwordless or IdP link) starts in the initial state. */
function initialState(canLogIn: boolean): UserState {
  return canLogIn ? 'USER_STATE_ACTIVE' : 'USER_STATE_INITIAL';
}
