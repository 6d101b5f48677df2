import { randomInt } from 'node:crypto';
import type { OrgsReader } from '../../actors/orgs.js';
import type { FailureWindow, FailureWindowsActor } from '../../actors/failure-windows.js';
import type { CodePurpose, UserCodesActor } from '../../actors/user-codes.js';
import type { UserRecord } from '../../model/records.js';
import { clock } from '../../util/clock.js';
import type { View } from '../../util/readonly.js';
import { fillPlaceholders, resolveMessageText, type MessageKind } from '../../zitadel/message-texts.js';
import { INSTANCE_POLICY } from '../../model/records.js';
import { renderMail } from './mail-layout.js';
import { assetPath } from '../../domain/label-asset.js';
import type { Mailer } from './mailer.js';

/**
 * What people are mailed, and the codes in those mails: a code is made, stored as a MAC
 * (UserCodesActor), and mailed in the person's language with a link to the login page that takes
 * it. Sending is bounded per person and per client address (a window in the store, every thread
 * counting into it), so nobody can make Sesame mail someone without end.
 */
export interface CodeRule {
  kind: MessageKind;
  length: number;
  alphabet: string;
  lifetimeMs: number;
  /** The login page the mail links to (none: the code is typed at the step that sent it). */
  path?: string;
  /** Codes of this purpose mailed to one person per hour. */
  perPersonPerHour: number;
}

const UPPER_AND_DIGITS = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const DIGITS = '0123456789';
const HOUR = 3_600_000;

/** ZITADEL's code generators (lengths, lifetimes); letters that look alike left out. */
export const CODE_RULES: Readonly<Record<CodePurpose, CodeRule>> = {
  verifyEmail: { kind: 'VerifyEmail', length: 6, alphabet: UPPER_AND_DIGITS, lifetimeMs: HOUR, path: '/ui/login/mail/verification', perPersonPerHour: 5 },
  passwordReset: { kind: 'PasswordReset', length: 6, alphabet: UPPER_AND_DIGITS, lifetimeMs: HOUR, path: '/ui/login/password/init', perPersonPerHour: 5 },
  init: { kind: 'InitCode', length: 6, alphabet: UPPER_AND_DIGITS, lifetimeMs: 72 * HOUR, path: '/ui/login/user/init', perPersonPerHour: 5 },
  // One per sign-in that passed the password: a bound that does not lock a busy person out.
  otpEmail: { kind: 'VerifyEmailOTP', length: 8, alphabet: DIGITS, lifetimeMs: 5 * 60_000, perPersonPerHour: 30 },
  // A link to register a passkey (ZITADEL's passwordless registration): longer, since it is only a link.
  passwordless: { kind: 'PasswordlessRegistration', length: 12, alphabet: UPPER_AND_DIGITS, lifetimeMs: HOUR, path: '/ui/login/passwordless/init', perPersonPerHour: 5 },
};

/** Codes mailed to anyone from one client address per hour (per person: each purpose's rule). */
const PER_ADDRESS_PER_HOUR = 20;

export function newCode(rule: CodeRule): string {
  let code = '';
  for (let i = 0; i < rule.length; i++) code += rule.alphabet[randomInt(rule.alphabet.length)];
  return code;
}

/** What became of a code: sent (or, asked for, returned), or not: too many this hour, no address. */
export type SendOutcome = { outcome: 'sent'; code?: string; link?: string } | { outcome: 'limited' | 'noEmail' };

export class Notifications {
  private readonly perPerson: Record<CodePurpose, FailureWindow>;
  private readonly perAddress: FailureWindow;

  constructor(
    private readonly orgs: OrgsReader,
    private readonly codes: UserCodesActor,
    private readonly mailer: Mailer,
    failureWindows: FailureWindowsActor,
    private readonly issuer: string,
  ) {
    const perPerson = (purpose: CodePurpose) => failureWindows.window(`mail-person-${purpose}`, CODE_RULES[purpose].perPersonPerHour, HOUR);
    this.perPerson = Object.fromEntries((Object.keys(CODE_RULES) as CodePurpose[]).map((purpose) => [purpose, perPerson(purpose)])) as Record<CodePurpose, FailureWindow>;
    this.perAddress = failureWindows.window('mail-address', PER_ADDRESS_PER_HOUR, HOUR);
  }

  /**
   * Makes a code for the person and mails it with a link to the page that takes it (with the sign-in
   * under way, if any). Resolves once the code and the mail are durable; 'limited' when the person or
   * the address had their share this hour (nothing sent).
   */
  async sendCode(
    user: View<UserRecord>,
    purpose: CodePurpose,
    options: { authRequestId?: string | undefined; clientAddress?: string | undefined; urlTemplate?: string | undefined; returnCode?: boolean; returnLink?: boolean } = {},
  ): Promise<SendOutcome> {
    const email = user.human?.email.email;
    if (!email && !options.returnLink) return { outcome: 'noEmail' };
    if (options.clientAddress !== undefined && !(await this.perAddress.take(options.clientAddress))) return { outcome: 'limited' };
    if (!(await this.perPerson[purpose].take(user.id))) return { outcome: 'limited' };
    const rule = CODE_RULES[purpose];
    const code = newCode(rule);
    const now = clock.now();
    // The code vouches for the address it went to: a verification of another address fails.
    await this.codes.issue(user.id, purpose, code, now, rule.lifetimeMs, purpose === 'verifyEmail' || purpose === 'init' ? (email ?? '').toLowerCase() : '');
    // User v2's returnCode: the caller (an administrator's own UI) gets the code and mails nothing.
    if (options.returnCode) return { outcome: 'sent', code };
    // ZITADEL's AddPasswordlessRegistration: the link is the caller's to hand over.
    if (options.returnLink) return { outcome: 'sent', link: this.linkOf(user, rule.path!, purpose, code, options) };
    await this.mail(user, rule.kind, { Code: code, OTP: code }, rule.path === undefined ? undefined : this.linkOf(user, rule.path, purpose, code, options));
    return { outcome: 'sent' };
  }

  /** The link a code's mail carries: Sesame's page for it, or the caller's `urlTemplate` (user v2) filled in. */
  private linkOf(user: View<UserRecord>, path: string, purpose: CodePurpose, code: string, options: { authRequestId?: string | undefined; urlTemplate?: string | undefined }): string {
    if (options.urlTemplate) return fillPlaceholders(options.urlTemplate, { UserID: user.id, Code: code, OrgID: user.orgId, LoginName: this.orgs.preferredLoginName(user) });
    const link = new URL(path, this.issuer);
    link.searchParams.set('userID', user.id);
    link.searchParams.set('code', code);
    link.searchParams.set('orgID', user.orgId);
    if (purpose === 'init') link.searchParams.set('passwordset', user.human?.passwordHash ? 'true' : 'false');
    if (options.authRequestId) link.searchParams.set('authRequestID', options.authRequestId);
    return link.toString();
  }

  /**
   * What a person made by an administrator or an import is mailed (ZITADEL's): an initialization
   * code when they have no password (it also verifies the address), else a verification code when
   * the address is not verified; nothing otherwise.
   */
  async welcome(user: View<UserRecord>): Promise<SendOutcome | undefined> {
    if (!user.human) return undefined;
    if (!user.human.passwordHash) return this.sendCode(user, 'init');
    if (!user.human.email.isEmailVerified) return this.sendCode(user, 'verifyEmail');
    return undefined;
  }

  /** The notification policy's `passwordChange`: the person is told their password changed. */
  async passwordChanged(user: View<UserRecord>): Promise<void> {
    if (!user.human?.email.email || !this.orgs.policy('notification', user.orgId).policy.passwordChange) return;
    await this.mail(user, 'PasswordChange', {}, new URL('/ui/login/loginname', this.issuer).toString());
  }

  private async mail(user: View<UserRecord>, kind: MessageKind, extra: Record<string, string>, url: string | undefined): Promise<void> {
    const human = user.human!;
    // The org's own texts, then the instance's, then Sesame's (src/zitadel/message-texts.ts).
    const own = this.orgs.hasOwnPolicy('messageTexts', user.orgId) ? this.orgs.policy('messageTexts', user.orgId).policy : {};
    const { language, text } = resolveMessageText(kind, human.profile.preferredLanguage, own, this.orgs.policy('messageTexts', INSTANCE_POLICY).policy);
    const values: Record<string, string> = {
      UserName: user.userName,
      FirstName: human.profile.firstName,
      LastName: human.profile.lastName,
      NickName: human.profile.nickName,
      DisplayName: human.profile.displayName || `${human.profile.firstName} ${human.profile.lastName}`.trim(),
      PreferredLoginName: this.orgs.preferredLoginName(user),
      LoginNames: this.orgs.loginNames(user).join(', '),
      LastEmail: human.email.email,
      VerifiedEmail: human.email.isEmailVerified ? human.email.email : '',
      OrgName: this.orgs.getOrg(user.orgId)?.name ?? '',
      ...extra,
    };
    const label = this.orgs.policy('label', user.orgId).policy;
    const logo = label.logo ? new URL(assetPath(label.logo), this.issuer).toString() : undefined;
    const rendered = renderMail(human.email.email, language, text, values, label, url ? { url } : undefined, logo);
    await this.mailer.queue({ ...rendered, kind, orgId: user.orgId, userId: user.id, language });
  }
}
