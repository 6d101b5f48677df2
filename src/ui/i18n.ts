/**
 * Login UI texts in English and German. The locale comes from `ui_locales` (first supported
 * entry), then Accept-Language (by q-value), then English.
 */
import { LOCALES, type Locale } from '../model/authorization.js';

export { LOCALES, type Locale };

const en = {
  'app.title': 'Sign in',
  'login.title': 'Sign in',
  'login.intro': 'Enter your login name to continue to {client}.',
  'login.loginName': 'Login name',
  'login.next': 'Next',
  'login.register': 'Create an account',
  'login.unknown': 'This user could not be found.',
  'mfa.title': 'Set up a second factor',
  'mfa.intro.required': 'Your organization requires a second factor. Scan the QR code with an authenticator app, or type in the key, then enter the 6-digit code the app shows.',
  'mfa.intro.optional': 'Protect your account with a second factor: scan the QR code with an authenticator app, or type in the key, then enter the 6-digit code the app shows.',
  'mfa.qr': 'QR code to scan with an authenticator app',
  'mfa.secret': 'Key for typing in',
  'mfa.submit': 'Activate',
  'mfa.skip': 'Skip for now',
  'mfa.skipNotAllowed': 'Your organization requires a second factor: it cannot be skipped.',
  'passwordChange.title': 'Choose a new password',
  'passwordChange.intro': 'A new password is required for {user} before you continue.',
  'passwordChange.new': 'New password',
  'passwordChange.confirm': 'Repeat new password',
  'passwordChange.submit': 'Change password',
  'native.title': 'Signed in',
  'native.intro': 'You are signed in. Return to {client} to continue.',
  'native.continue': 'Back to {client}',
  'password.title': 'Password',
  'password.intro': 'Enter the password for {user}.',
  'password.label': 'Password',
  'password.submit': 'Sign in',
  'password.otherUser': 'Not you? Use another account',
  'password.invalid': 'The login name or the password is wrong.',
  'password.locked': 'This account is locked after too many failed attempts. Contact your administrator.',
  'password.notAllowed': 'Signing in with a password is not allowed for this organization.',
  'otp.title': 'Verification code',
  'otp.intro': 'Enter the 6-digit code from your authenticator app.',
  'otp.label': 'Code',
  'otp.submit': 'Verify',
  'otp.invalid': 'The code is wrong or expired. Try the current code.',
  'select.title': 'Choose an account',
  'select.intro': 'Continue to {client} as:',
  'select.other': 'Use another account',
  'select.signedIn': 'signed in',
  'register.title': 'Create an account',
  'register.intro': 'Register to continue to {client}.',
  'register.firstName': 'First name',
  'register.lastName': 'Last name',
  'register.email': 'Email',
  'register.userName': 'User name',
  'register.password': 'Password',
  'register.passwordConfirm': 'Repeat password',
  'register.submit': 'Register',
  'register.back': 'I already have an account',
  'register.notAllowed': 'Registration is not allowed for this organization.',
  'register.missing': 'Please fill in every field.',
  'register.email.invalid': 'Enter a valid email address.',
  'register.password.short': 'The password must have at least {min} characters.',
  'password.rule.maxLength': 'The password is too long.',
  'password.rule.hasUppercase': 'The password must contain an uppercase letter.',
  'password.rule.hasLowercase': 'The password must contain a lowercase letter.',
  'password.rule.hasNumber': 'The password must contain a number.',
  'password.rule.hasSymbol': 'The password must contain a symbol (a character that is neither a letter nor a number).',
  'register.password.mismatch': 'The passwords do not match.',
  'register.taken': 'This user name is already taken.',
  'error.title': 'Something went wrong',
  'error.back': 'Go back to the application and try again.',
  'error.unexpected': 'An unexpected error occurred.',
  'error.inactive': 'The application or the user is no longer active.',
  'error.notFound': 'This page does not exist.',
  'error.method': 'This page cannot be used that way.',
  'error.unavailable': 'The service is restarting. Try again in a moment.',
  'error.expired': 'This sign-in request expired or was started in another browser. Start again from the application.',
  'error.csrf': 'The form expired. Reload the page and try again.',
  'continue.error.title': 'The sign-in did not complete',
  'continue.intro': 'You are not sent back to {client} automatically. Go on to {target} only if you expected to.',
  'continue.link': 'Continue to {client}',
  'logout.title': 'Signed out',
  'logout.intro': 'You have been signed out. You can close this window.',
  'formpost.continue': 'Continue',
  'formpost.intro': 'JavaScript is disabled. Press the button to continue.',
  'device.title': 'Connect a device',
  'device.intro': 'Enter the code shown on your device.',
  'device.code': 'Code',
  'device.submit': 'Continue',
  'device.invalid': 'This code is wrong, expired or already used. Check the code on your device, or start again there.',
  'device.tooMany': 'Too many wrong codes from this network. Wait a few minutes and try again.',
  'device.consent.title': 'Allow access?',
  'device.consent.intro': '{client} on your device asks to access your account {user}.',
  'device.consent.scopes': 'It asks for:',
  'device.consent.own': 'Allow only if you started this on a device of your own just now. Never allow for a code someone sent you.',
  'device.consent.allow': 'Allow',
  'client.consent.intro': '{client} asks to access your account {user}.',
  'consent.selfRegistered': '{client} registered itself with this server, which does not vouch for it.',
  'client.consent.own': 'Allow only if you started this sign-in in {client} yourself and trust it.',
  'device.consent.deny': 'Deny',
  'device.allowed.title': 'Device connected',
  'device.allowed.intro': '{client} is now signed in on your device. You can close this window.',
  'device.denied.title': 'Access denied',
  'device.denied.intro': '{client} was not given access. You can close this window.',
  'device.scope.openid': 'Sign you in',
  'device.scope.profile': 'Your name and profile',
  'device.scope.email': 'Your email address',
  'device.scope.phone': 'Your phone number',
  'device.scope.address': 'Your address',
  'device.scope.offline_access': 'Stay signed in (offline access)',
  'footer': 'Secured by Sesame',
} as const;

export type TextKey = keyof typeof en;

const de: Record<TextKey, string> = {
  'app.title': 'Anmelden',
  'login.title': 'Anmelden',
  'login.intro': 'Gib deinen Loginnamen ein, um zu {client} weiterzugehen.',
  'login.loginName': 'Loginname',
  'login.next': 'Weiter',
  'login.register': 'Konto erstellen',
  'login.unknown': 'Dieser Benutzer wurde nicht gefunden.',
  'mfa.title': 'Zweiten Faktor einrichten',
  'mfa.intro.required': 'Deine Organisation verlangt einen zweiten Faktor. Scanne den QR-Code mit einer Authenticator-App oder tippe den Schlüssel ein und gib dann den 6-stelligen Code der App ein.',
  'mfa.intro.optional': 'Schütze dein Konto mit einem zweiten Faktor: Scanne den QR-Code mit einer Authenticator-App oder tippe den Schlüssel ein und gib dann den 6-stelligen Code der App ein.',
  'mfa.qr': 'QR-Code zum Scannen mit einer Authenticator-App',
  'mfa.secret': 'Schlüssel zum Eintippen',
  'mfa.submit': 'Aktivieren',
  'mfa.skip': 'Später einrichten',
  'mfa.skipNotAllowed': 'Deine Organisation verlangt einen zweiten Faktor: Er kann nicht übersprungen werden.',
  'passwordChange.title': 'Neues Passwort wählen',
  'passwordChange.intro': 'Für {user} ist ein neues Passwort nötig, bevor es weitergeht.',
  'passwordChange.new': 'Neues Passwort',
  'passwordChange.confirm': 'Neues Passwort wiederholen',
  'passwordChange.submit': 'Passwort ändern',
  'native.title': 'Angemeldet',
  'native.intro': 'Du bist angemeldet. Kehre zu {client} zurück, um fortzufahren.',
  'native.continue': 'Zurück zu {client}',
  'password.title': 'Passwort',
  'password.intro': 'Gib das Passwort für {user} ein.',
  'password.label': 'Passwort',
  'password.submit': 'Anmelden',
  'password.otherUser': 'Nicht du? Anderes Konto verwenden',
  'password.invalid': 'Der Loginname oder das Passwort ist falsch.',
  'password.locked': 'Dieses Konto ist nach zu vielen Fehlversuchen gesperrt. Wende dich an deinen Administrator.',
  'password.notAllowed': 'Die Anmeldung mit Passwort ist für diese Organisation nicht erlaubt.',
  'otp.title': 'Bestätigungscode',
  'otp.intro': 'Gib den 6-stelligen Code aus deiner Authenticator-App ein.',
  'otp.label': 'Code',
  'otp.submit': 'Bestätigen',
  'otp.invalid': 'Der Code ist falsch oder abgelaufen. Versuche den aktuellen Code.',
  'select.title': 'Konto auswählen',
  'select.intro': 'Weiter zu {client} als:',
  'select.other': 'Anderes Konto verwenden',
  'select.signedIn': 'angemeldet',
  'register.title': 'Konto erstellen',
  'register.intro': 'Registriere dich, um zu {client} weiterzugehen.',
  'register.firstName': 'Vorname',
  'register.lastName': 'Nachname',
  'register.email': 'E-Mail',
  'register.userName': 'Benutzername',
  'register.password': 'Passwort',
  'register.passwordConfirm': 'Passwort wiederholen',
  'register.submit': 'Registrieren',
  'register.back': 'Ich habe bereits ein Konto',
  'register.notAllowed': 'Die Registrierung ist für diese Organisation nicht erlaubt.',
  'register.missing': 'Bitte fülle alle Felder aus.',
  'register.email.invalid': 'Gib eine gültige E-Mail-Adresse ein.',
  'register.password.short': 'Das Passwort muss mindestens {min} Zeichen haben.',
  'password.rule.maxLength': 'Das Passwort ist zu lang.',
  'password.rule.hasUppercase': 'Das Passwort muss einen Großbuchstaben enthalten.',
  'password.rule.hasLowercase': 'Das Passwort muss einen Kleinbuchstaben enthalten.',
  'password.rule.hasNumber': 'Das Passwort muss eine Ziffer enthalten.',
  'password.rule.hasSymbol': 'Das Passwort muss ein Sonderzeichen enthalten (ein Zeichen, das weder Buchstabe noch Ziffer ist).',
  'register.password.mismatch': 'Die Passwörter stimmen nicht überein.',
  'register.taken': 'Dieser Benutzername ist bereits vergeben.',
  'error.title': 'Etwas ist schiefgelaufen',
  'error.back': 'Kehre zur Anwendung zurück und versuche es erneut.',
  'error.unexpected': 'Ein unerwarteter Fehler ist aufgetreten.',
  'error.inactive': 'Die Anwendung oder die Person ist nicht mehr aktiv.',
  'error.notFound': 'Diese Seite gibt es nicht.',
  'error.method': 'Diese Seite kann so nicht verwendet werden.',
  'error.unavailable': 'Der Dienst startet neu. Versuche es gleich noch einmal.',
  'error.expired': 'Diese Anmeldeanfrage ist abgelaufen oder wurde in einem anderen Browser gestartet. Beginne erneut in der Anwendung.',
  'error.csrf': 'Das Formular ist abgelaufen. Lade die Seite neu und versuche es erneut.',
  'continue.error.title': 'Die Anmeldung wurde nicht abgeschlossen',
  'continue.intro': 'Du wirst nicht automatisch zu {client} zurückgeleitet. Geh nur zu {target} weiter, wenn du das erwartet hast.',
  'continue.link': 'Weiter zu {client}',
  'logout.title': 'Abgemeldet',
  'logout.intro': 'Du wurdest abgemeldet. Du kannst dieses Fenster schließen.',
  'formpost.continue': 'Weiter',
  'formpost.intro': 'JavaScript ist deaktiviert. Klicke auf die Schaltfläche, um fortzufahren.',
  'device.title': 'Gerät verbinden',
  'device.intro': 'Gib den Code ein, den dein Gerät anzeigt.',
  'device.code': 'Code',
  'device.submit': 'Weiter',
  'device.invalid': 'Dieser Code ist falsch, abgelaufen oder schon verwendet. Prüfe den Code auf deinem Gerät oder starte dort neu.',
  'device.tooMany': 'Zu viele falsche Codes aus diesem Netzwerk. Warte einige Minuten und versuche es erneut.',
  'device.consent.title': 'Zugriff erlauben?',
  'device.consent.intro': '{client} auf deinem Gerät möchte auf dein Konto {user} zugreifen.',
  'device.consent.scopes': 'Angefragt wird:',
  'device.consent.own': 'Erlaube es nur, wenn du das gerade selbst auf deinem eigenen Gerät gestartet hast. Niemals für einen Code, den dir jemand geschickt hat.',
  'device.consent.allow': 'Erlauben',
  'client.consent.intro': '{client} möchte auf dein Konto {user} zugreifen.',
  'consent.selfRegistered': '{client} hat sich selbst bei diesem Server registriert, der nicht für die Anwendung bürgt.',
  'client.consent.own': 'Erlaube es nur, wenn du diese Anmeldung selbst in {client} begonnen hast und der Anwendung vertraust.',
  'device.consent.deny': 'Ablehnen',
  'device.allowed.title': 'Gerät verbunden',
  'device.allowed.intro': '{client} ist jetzt auf deinem Gerät angemeldet. Du kannst dieses Fenster schließen.',
  'device.denied.title': 'Zugriff abgelehnt',
  'device.denied.intro': '{client} hat keinen Zugriff erhalten. Du kannst dieses Fenster schließen.',
  'device.scope.openid': 'Dich anmelden',
  'device.scope.profile': 'Deinen Namen und dein Profil',
  'device.scope.email': 'Deine E-Mail-Adresse',
  'device.scope.phone': 'Deine Telefonnummer',
  'device.scope.address': 'Deine Adresse',
  'device.scope.offline_access': 'Angemeldet bleiben (Offline-Zugriff)',
  'footer': 'Geschützt durch Sesame',
};

const DICTIONARIES: Record<Locale, Record<TextKey, string>> = { en, de };

export type Translate = (key: TextKey, vars?: Record<string, string>) => string;

export function translator(locale: Locale): Translate {
  const dict = DICTIONARIES[locale];
  return (key, vars) => {
    let text = dict[key] ?? en[key];
    if (vars) for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`{${k}}`, v);
    return text;
  };
}

function supported(tag: string): Locale | undefined {
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
  return LOCALES.find((l) => l === primary);
}

/** ui_locales first (space-separated, in order), then Accept-Language by q-value, then English. */
export function chooseLocale(uiLocales: string | undefined, acceptLanguage: string | undefined): Locale {
  for (const tag of (uiLocales ?? '').split(' ')) {
    const found = tag && supported(tag);
    if (found) return found;
  }
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag ?? '', q: q === undefined ? 1 : Number(q), index };
    })
    .filter((e) => e.tag && e.q > 0 && !Number.isNaN(e.q))
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranked) {
    const found = supported(tag);
    if (found) return found;
  }
  return 'en';
}
