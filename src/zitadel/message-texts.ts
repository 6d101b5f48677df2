import { z } from 'zod';
import type { MessageText, MessageTexts } from '../model/records.js';
import type { View } from '../util/readonly.js';
import { text } from './validation.js';

export type { MessageText };

/**
 * ZITADEL's message types: the path of the text API (`/management/v1/text/message/<path>/<lang>`),
 * the list of a bundle that carries them (with its report type), and whether Sesame sends them.
 */
export const MESSAGE_TYPES = [
  { kind: 'InitCode', path: 'init', bundleField: 'initMessages', errorType: 'init_message', sent: true },
  { kind: 'PasswordReset', path: 'passwordreset', bundleField: 'passwordResetMessages', errorType: 'password_reset_message', sent: true },
  { kind: 'VerifyEmail', path: 'verifyemail', bundleField: 'verifyEmailMessages', errorType: 'verify_email_message', sent: true },
  { kind: 'VerifyPhone', path: 'verifyphone', bundleField: 'verifyPhoneMessages', errorType: 'verify_phone_message', sent: false },
  { kind: 'DomainClaimed', path: 'domainclaimed', bundleField: 'domainClaimedMessages', errorType: 'domain_claimed_message', sent: false },
  { kind: 'PasswordlessRegistration', path: 'passwordless_registration', bundleField: 'passwordlessRegistrationMessages', errorType: 'passwordless_registration_message', sent: true },
  { kind: 'PasswordChange', path: 'password_change', bundleField: undefined, errorType: 'password_change_message', sent: true },
  { kind: 'VerifyEmailOTP', path: 'verifyemailotp', bundleField: 'verifyEmailOtpMessages', errorType: 'verify_email_otp_message', sent: true },
  { kind: 'VerifySMSOTP', path: 'verifysmsotp', bundleField: 'verifySmsOtpMessages', errorType: 'verify_sms_otp_message', sent: false },
  { kind: 'InviteUser', path: 'inviteuser', bundleField: 'inviteUserMessages', errorType: 'invite_user_messages', sent: false },
] as const;

export type MessageType = (typeof MESSAGE_TYPES)[number];
/** The kinds Sesame mails (it has built-in texts for these). */
export type MessageKind = 'InitCode' | 'PasswordReset' | 'VerifyEmail' | 'VerifyEmailOTP' | 'PasswordChange' | 'PasswordlessRegistration';

const FIELDS = ['title', 'preHeader', 'subject', 'greeting', 'text', 'buttonText', 'footerText'] as const;

/** Languages one message type may have texts in (an org's texts are one record, read with the directory). */
export const MAX_MESSAGE_LANGUAGES = 40;

/** A language tag (BCP 47, as ZITADEL's text API takes it). */
export const LANGUAGE_TAG = /^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;

/**
 * The text a mail of `kind` in `language` uses: the org's own fields first, then the instance's,
 * then the built-in text in that language (English where Sesame has none). `language` is the
 * person's preferred one when the org, the instance or Sesame has texts in it, else English.
 *
 * ZITADEL's notification message texts (the `*Messages` of a bundle, the text API's message
 * types): the fields of a mail, per kind and language, with `{{.Variable}}` placeholders filled
 * from the person and the code. These are the built-in texts in English and German; an org's or
 * the instance's own texts replace them field by field.
 */
export function resolveMessageText(kind: MessageKind, preferred: string | undefined, own: View<MessageTexts>, instance: View<MessageTexts>): { language: string; text: MessageText } {
  const tag = (preferred ?? '').toLowerCase();
  const primary = tag.split(/[-_]/)[0] ?? '';
  const has = (texts: View<MessageTexts>, lang: string) => texts[kind]?.[lang] !== undefined;
  const language = [tag, primary].find((l) => l && (has(own, l) || has(instance, l) || (MESSAGE_LANGUAGES as readonly string[]).includes(l))) ?? 'en';
  const builtIn = DEFAULT_MESSAGE_TEXTS[(MESSAGE_LANGUAGES as readonly string[]).includes(language) ? (language as MessageLanguage) : 'en'][kind];
  const text = { ...builtIn };
  for (const layer of [instance[kind]?.[language], own[kind]?.[language]]) {
    for (const field of FIELDS) if (layer?.[field]) text[field] = layer[field]!;
  }
  return { language, text };
}

/** A custom text as set (SetCustom…MessageText) or imported (a bundle's `*Messages` element). */
export const messageTextSchema = z.object({
  title: text(500),
  preHeader: text(500),
  subject: text(500),
  greeting: text(500),
  text: text(5000),
  buttonText: text(500),
  footerText: text(5000),
});
export const bundleMessageSchema = messageTextSchema.extend({ language: z.string().trim().toLowerCase().regex(LANGUAGE_TAG, 'must be a language tag such as "de"') });

/** Only the fields set: an empty one falls back to the text below it. */
export function setFields(input: z.output<typeof messageTextSchema>): Partial<MessageText> {
  return Object.fromEntries(FIELDS.filter((f) => input[f] !== '').map((f) => [f, input[f]]));
}

/** Every custom text of an org as a bundle's nine `*Messages` lists (`language` first, protojson). */
export function bundleMessageLists(texts: View<MessageTexts>): Record<string, object[]> {
  const lists: Record<string, object[]> = {};
  for (const type of MESSAGE_TYPES) {
    if (!type.bundleField) continue;
    const byLanguage = texts[type.kind] ?? {};
    const languages = Object.keys(byLanguage).sort();
    if (languages.length > 0) lists[type.bundleField] = languages.map((language) => ({ language, ...byLanguage[language] }));
  }
  return lists;
}

export const MESSAGE_LANGUAGES = ['en', 'de'] as const;
export type MessageLanguage = (typeof MESSAGE_LANGUAGES)[number];

export const DEFAULT_MESSAGE_TEXTS: Record<MessageLanguage, Record<MessageKind, MessageText>> = {
  en: {
    InitCode: {
      title: 'Initialize User',
      preHeader: 'Initialize User',
      subject: 'Initialize User',
      greeting: 'Hello {{.DisplayName}},',
      text: "This user was created. Use the username {{.PreferredLoginName}} to log in. Please click the button below to finish the initialization process. (Code {{.Code}}) If you didn't ask for this mail, please ignore it.",
      buttonText: 'Finish initialization',
      footerText: '',
    },
    PasswordReset: {
      title: 'Reset password',
      preHeader: 'Reset password',
      subject: 'Reset password',
      greeting: 'Hello {{.DisplayName}},',
      text: "We received a password reset request. Please use the button below to reset your password. (Code {{.Code}}) If you didn't ask for this mail, please ignore it.",
      buttonText: 'Reset password',
      footerText: '',
    },
    VerifyEmail: {
      title: 'Verify email',
      preHeader: 'Verify email',
      subject: 'Verify email',
      greeting: 'Hello {{.DisplayName}},',
      text: "A new email has been added. Please use the button below to verify your email. (Code {{.Code}}) If you didn't add a new email, please ignore this email.",
      buttonText: 'Verify email',
      footerText: '',
    },
    VerifyEmailOTP: {
      title: 'Verify One-Time Password',
      preHeader: 'Verify One-Time Password',
      subject: 'Verify One-Time Password',
      greeting: 'Hello {{.DisplayName}},',
      text: 'Please use the one-time password {{.OTP}} to authenticate within the next five minutes.',
      buttonText: 'Authenticate',
      footerText: '',
    },
    PasswordChange: {
      title: 'Password of user has changed',
      preHeader: 'Change password',
      subject: 'Password of user has changed',
      greeting: 'Hello {{.DisplayName}},',
      text: 'The password of your user has changed. If this change was not done by you, please be advised to immediately reset your password.',
      buttonText: 'Login',
      footerText: '',
    },
    PasswordlessRegistration: {
      title: 'Add Passwordless Login',
      preHeader: 'Add Passwordless Login',
      subject: 'Add Passwordless Login',
      greeting: 'Hello {{.DisplayName}},',
      text: 'We received a request to add a token for passwordless login. Please use the button below to add your token or device for passwordless login.',
      buttonText: 'Add Passwordless Login',
      footerText: '',
    },
  },
  de: {
    InitCode: {
      title: 'Benutzer initialisieren',
      preHeader: 'Benutzer initialisieren',
      subject: 'Benutzer initialisieren',
      greeting: 'Hallo {{.DisplayName}},',
      text: 'Dieser Benutzer wurde soeben erstellt. Mit dem Benutzernamen {{.PreferredLoginName}} kannst du dich anmelden. Nutze den unteren Button, um die Initialisierung abzuschließen. (Code {{.Code}}) Falls du dieses Mail nicht angefordert hast, kannst du es einfach ignorieren.',
      buttonText: 'Initialisierung abschließen',
      footerText: '',
    },
    PasswordReset: {
      title: 'Passwort zurücksetzen',
      preHeader: 'Passwort zurücksetzen',
      subject: 'Passwort zurücksetzen',
      greeting: 'Hallo {{.DisplayName}},',
      text: 'Wir haben eine Anfrage zum Zurücksetzen des Passworts erhalten. Nutze den unteren Button, um dein Passwort zurückzusetzen. (Code {{.Code}}) Falls du dieses Mail nicht angefordert hast, kannst du es einfach ignorieren.',
      buttonText: 'Passwort zurücksetzen',
      footerText: '',
    },
    VerifyEmail: {
      title: 'E-Mail verifizieren',
      preHeader: 'E-Mail verifizieren',
      subject: 'E-Mail verifizieren',
      greeting: 'Hallo {{.DisplayName}},',
      text: 'Eine neue E-Mail-Adresse wurde hinzugefügt. Bitte verwende den unteren Button, um diese zu verifizieren. (Code {{.Code}}) Falls du keine neue E-Mail-Adresse hinzugefügt hast, kannst du diese E-Mail ignorieren.',
      buttonText: 'E-Mail verifizieren',
      footerText: '',
    },
    VerifyEmailOTP: {
      title: 'Einmalpasswort verifizieren',
      preHeader: 'Einmalpasswort verifizieren',
      subject: 'Einmalpasswort verifizieren',
      greeting: 'Hallo {{.DisplayName}},',
      text: 'Bitte nutze das Einmalpasswort {{.OTP}} innerhalb der nächsten fünf Minuten, um dich zu authentifizieren.',
      buttonText: 'Authentifizieren',
      footerText: '',
    },
    PasswordChange: {
      title: 'Passwort von Benutzer wurde geändert',
      preHeader: 'Passwort ändern',
      subject: 'Passwort von Benutzer wurde geändert',
      greeting: 'Hallo {{.DisplayName}},',
      text: 'Das Passwort deines Benutzers wurde geändert. Wenn diese Änderung von jemand anderem gemacht wurde, empfehlen wir dir, sofort dein Passwort zurückzusetzen.',
      buttonText: 'Login',
      footerText: '',
    },
    PasswordlessRegistration: {
      title: 'Passwortlosen Login hinzufügen',
      preHeader: 'Passwortlosen Login hinzufügen',
      subject: 'Passwortlosen Login hinzufügen',
      greeting: 'Hallo {{.DisplayName}},',
      text: 'Wir haben eine Anfrage für das Hinzufügen eines Tokens für den passwortlosen Login erhalten. Benutze den untenstehenden Button, um dein Token oder Gerät hinzuzufügen.',
      buttonText: 'Passwortlosen Login hinzufügen',
      footerText: '',
    },
  },
};

/**
 * Fills `{{.Name}}` placeholders (ZITADEL's Go template syntax, its simple form) with the given
 * values; an unknown one becomes empty. The result is plain text: the caller escapes it for HTML.
 */
export function fillPlaceholders(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{\s*\.([A-Za-z][A-Za-z0-9]*)\s*\}\}/g, (_m, name: string) => (Object.hasOwn(values, name) ? values[name]! : ''));
}
