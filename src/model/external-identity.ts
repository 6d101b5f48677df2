/**
 * Who a person is at an identity provider, as Sesame keeps it while they sign in: the account's
 * id there (the link's key) and what the provider says of them (to create or update a person).
 * `emailVerified` is the provider's word only where it gives one (an OIDC `email_verified: true`,
 * GitHub's verified primary address, Microsoft with the provider's `emailVerified` option);
 * anything else is unverified, and an unverified email never links an account.
 */
export interface ExternalIdentity {
  idpId: string;
  externalUserId: string;
  userName: string;
  email: string;
  emailVerified: boolean;
  firstName: string;
  lastName: string;
  displayName: string;
  nickName: string;
  preferredLanguage: string;
  phone: string;
  phoneVerified: boolean;
}
