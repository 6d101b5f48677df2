import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { randomBytes } from 'node:crypto';
import type { UserRecord, WebAuthnToken } from '../model/records.js';
import { newId } from '../util/ids.js';
import type { View } from '../util/readonly.js';

/**
 * WebAuthn ceremonies with @simplewebauthn/server: passkeys (ZITADEL's passwordless tokens: a
 * resident credential with user verification, the first factor and a second in one) and security
 * keys (U2F: a second factor; user verification not asked). The relying party is the issuer's
 * host, the origin the issuer's. Attestation is not asked ('none'): Sesame trusts no particular
 * maker of authenticators, as ZITADEL's default. Every check of the library applies (challenge,
 * origin, RP id, user presence, user verification where asked, signature, counter).
 */
export type WebAuthnKind = WebAuthnToken['kind'];

export interface Ceremony<T> {
  options: T;
  challenge: string;
}

export class WebAuthn {
  readonly rpId: string;
  readonly origin: string;

  constructor(
    issuer: string,
    private readonly rpName = 'Sesame',
  ) {
    const url = new URL(issuer);
    this.rpId = url.hostname;
    this.origin = url.origin;
  }

  /** A new credential for the person: passkey or security key; their own are excluded (no second registration of one authenticator). */
  async registration(user: View<UserRecord>, loginName: string, kind: WebAuthnKind): Promise<Ceremony<PublicKeyCredentialCreationOptionsJSON>> {
    const options = await generateRegistrationOptions({
      rpName: this.rpName,
      rpID: this.rpId,
      userName: loginName,
      userID: Buffer.from(user.id, 'utf8'),
      userDisplayName: user.human?.profile.displayName || loginName,
      challenge: randomBytes(32),
      attestationType: 'none',
      timeout: 300_000,
      excludeCredentials: (user.human?.webauthn ?? []).map((t) => ({ id: t.id, ...(t.transports ? { transports: [...t.transports] } : {}) })),
      authenticatorSelection:
        kind === 'passwordless' ? { residentKey: 'required', requireResidentKey: true, userVerification: 'required' } : { residentKey: 'discouraged', userVerification: 'discouraged' },
    });
    return { options, challenge: options.challenge };
  }

  /** The answer to a registration: the token to store, or undefined when it does not verify. */
  async verifyRegistration(response: unknown, challenge: string, kind: WebAuthnKind, name: string, now: number): Promise<WebAuthnToken | undefined> {
    try {
      const { verified, registrationInfo } = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge: challenge,
        expectedOrigin: this.origin,
        expectedRPID: this.rpId,
        requireUserVerification: kind === 'passwordless',
      });
      if (!verified) return undefined;
      const { credential } = registrationInfo;
      return {
        id: credential.id,
        tokenId: newId(),
        publicKey: new Uint8Array(credential.publicKey),
        counter: credential.counter,
        ...(credential.transports?.length ? { transports: credential.transports } : {}),
        name,
        kind,
        createdAt: now,
      };
    } catch {
      return undefined;
    }
  }

  /** An authentication with one of `tokens` (passkeys: user verification required). */
  async authentication(tokens: readonly View<WebAuthnToken>[], userVerification: 'required' | 'preferred' | 'discouraged'): Promise<Ceremony<PublicKeyCredentialRequestOptionsJSON>> {
    const options = await generateAuthenticationOptions({
      rpID: this.rpId,
      challenge: randomBytes(32),
      timeout: 300_000,
      userVerification,
      allowCredentials: tokens.map((t) => ({ id: t.id, ...(t.transports ? { transports: [...t.transports] } : {}) })),
    });
    return { options, challenge: options.challenge };
  }

  /**
   * The answer to an authentication: the token it used and its new counter, or undefined when it
   * does not verify (a token not among `tokens`, a counter behind the one stored, no user
   * verification where required).
   */
  async verifyAuthentication(
    response: unknown,
    challenge: string,
    tokens: readonly View<WebAuthnToken>[],
    requireUserVerification: (token: View<WebAuthnToken>) => boolean,
  ): Promise<{ token: View<WebAuthnToken>; counter: number } | undefined> {
    const answer = response as AuthenticationResponseJSON;
    const token = tokens.find((t) => t.id === answer?.id);
    if (!token) return undefined;
    try {
      const { verified, authenticationInfo } = await verifyAuthenticationResponse({
        response: answer,
        expectedChallenge: challenge,
        expectedOrigin: this.origin,
        expectedRPID: this.rpId,
        credential: { id: token.id, publicKey: new Uint8Array(token.publicKey), counter: token.counter, ...(token.transports ? { transports: [...token.transports] } : {}) },
        requireUserVerification: requireUserVerification(token),
      });
      return verified ? { token, counter: authenticationInfo.newCounter } : undefined;
    } catch {
      return undefined;
    }
  }
}

/** A ceremony's answer as the form posts it (JSON text); undefined when it is not a JSON object. */
export function parseCeremonyAnswer(text: string | undefined): unknown {
  if (!text || text.length > 20_000) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
