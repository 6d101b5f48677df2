/**
 * ZITADEL's notification message texts (the `*Messages` of a bundle, the text API's message
 * types): the fields of a mail, per kind and language, with `{{.Variable}}` placeholders filled
 * from the person and the code. These are the built-in texts in English and German; an org's or
 * the instance's own texts replace them field by field.
 */
export interface MessageText {
  title: string;
  preHeader: string;
  subject: string;
  greeting: string;
  text: string;
  buttonText: string;
  footerText: string;
}

export type MessageKind = 'InitCode' | 'PasswordReset' | 'VerifyEmail' | 'VerifyEmailOTP' | 'PasswordChange';
export const MESSAGE_LANGUAGES = ['en', 'de'] as const;
export type MessageLanguage = (typeof MESSAGE_LANGUAGES)[number];

export const DEFAULT_MESSAGE_TEXTS: Record<MessageLanguage, Record<MessageKind, MessageText>> = {
  en: {
    InitCode: {
      title: 'Initialize User',
      preHeader: 'Initialize User',
      subject: 'Initialize User',
      greeting: 'Hello {{.DisplayName}},',
      text: 'This user was created. Use the username {{.PreferredLoginName}} to log in. Please click the button below to finish the initialization process. (Code {{.Code}}) If you didn\'t ask for this mail, please ignore it.',
      buttonText: 'Finish initialization',
      footerText: '',
    },
    PasswordReset: {
      title: 'Reset password',
      preHeader: 'Reset password',
      subject: 'Reset password',
      greeting: 'Hello {{.DisplayName}},',
      text: 'We received a password reset request. Please use the button below to reset your password. (Code {{.Code}}) If you didn\'t ask for this mail, please ignore it.',
      buttonText: 'Reset password',
      footerText: '',
    },
    VerifyEmail: {
      title: 'Verify email',
      preHeader: 'Verify email',
      subject: 'Verify email',
      greeting: 'Hello {{.DisplayName}},',
      text: 'A new email has been added. Please use the button below to verify your email. (Code {{.Code}}) If you didn\'t add a new email, please ignore this email.',
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
  },
};

/** The language of a mail: the person's preferred one if there are texts in it, else English. */
export function messageLanguage(preferred: string | undefined): MessageLanguage {
  const primary = (preferred ?? '').toLowerCase().split(/[-_]/)[0];
  return MESSAGE_LANGUAGES.find((l) => l === primary) ?? 'en';
}

/**
 * Fills `{{.Name}}` placeholders (ZITADEL's Go template syntax, its simple form) with the given
 * values; an unknown one becomes empty. The result is plain text: the caller escapes it for HTML.
 */
export function fillPlaceholders(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{\s*\.([A-Za-z][A-Za-z0-9]*)\s*\}\}/g, (_m, name: string) => (Object.hasOwn(values, name) ? values[name]! : ''));
}
