import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { createTransport } from 'nodemailer';
import type { SmtpConfig } from '../../actors/smtp-configs.js';
import type { View } from '../../util/readonly.js';

/**
 * Sends a mail through an SMTP relay with nodemailer. The configuration's `tls` is ZITADEL's:
 * true asks for TLS (implicit TLS, or STARTTLS required when the relay speaks plain SMTP first),
 * false sends in plain SMTP (a relay on the same host or network; nothing is upgraded). A relay without
 * credentials (empty user) is sent to without logging in.
 */
export interface OutgoingMail {
  to: string;
  subject: string;
  html: string;
  text: string;
}

export interface SmtpSendOptions {
  /** Deadline of each step (connect, greeting, each command), ms. */
  timeoutMs: number;
  /** Certificates trusted for the relay besides the system's (SESAME_SMTP_TLS_CA_FILE). */
  ca?: string | undefined;
}

/** The port of `host:port`; 25 when none is given, as for any SMTP relay. */
function hostAndPort(host: string): { hostname: string; port: number } {
  const match = /^\[?([^\]]+?)\]?(?::(\d{1,5}))?$/.exec(host.trim());
  if (!match) throw new Error(`"${host}" is not host:port`);
  return { hostname: match[1]!, port: match[2] ? Number(match[2]) : 25 };
}

type TlsMode = 'implicit' | 'starttls' | 'none';

function transportFor(config: View<SmtpConfig>, password: string | undefined, options: SmtpSendOptions, mode: TlsMode) {
  const { hostname, port } = hostAndPort(config.host);
  return createTransport({
    host: hostname,
    port,
    secure: mode === 'implicit',
    requireTLS: mode === 'starttls',
    ignoreTLS: mode === 'none',
    ...(config.user ? { auth: { user: config.user, pass: password ?? '' } } : {}),
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    // `ca` replaces the trusted roots: the system's stay trusted beside the file's.
    tls: { servername: hostname, ...(options.ca ? { ca: [...rootCertificates, options.ca] } : {}) },
    disableFileAccess: true,
    disableUrlAccess: true,
  });
}

/** The relay answered a TLS hello in plain SMTP: it speaks STARTTLS, not implicit TLS. */
function plainAnswerToTls(error: unknown): boolean {
  const text = `${(error as { code?: string }).code ?? ''} ${(error as Error).message ?? ''}`;
  return /wrong version number|packet length too long|unknown protocol|EPROTO|http request/i.test(text);
}

function fromOf(config: View<SmtpConfig>) {
  return config.senderName ? { name: config.senderName, address: config.senderAddress } : config.senderAddress;
}

/**
 * One attempt to hand the mail to the relay: resolves when the relay accepted it, rejects with
 * what went wrong. With `tls`, implicit TLS is tried first and STARTTLS (required) when the relay
 * answers in plain SMTP, as ZITADEL does: a plain greeting fails the TLS hello at once.
 */
export async function sendMail(config: View<SmtpConfig>, password: string | undefined, mail: OutgoingMail, options: SmtpSendOptions): Promise<void> {
  if (!config.tls) return sendWith(config, password, mail, options, 'none');
  try {
    await sendWith(config, password, mail, options, 'implicit');
  } catch (error) {
    if (!plainAnswerToTls(error)) throw error;
    await sendWith(config, password, mail, options, 'starttls');
  }
}

async function sendWith(config: View<SmtpConfig>, password: string | undefined, mail: OutgoingMail, options: SmtpSendOptions, mode: TlsMode): Promise<void> {
  const transport = transportFor(config, password, options, mode);
  try {
    await transport.sendMail({
      from: fromOf(config),
      ...(config.replyToAddress ? { replyTo: config.replyToAddress } : {}),
      to: mail.to,
      subject: mail.subject,
      html: mail.html,
      text: mail.text,
    });
  } finally {
    transport.close();
  }
}

/** What went wrong, in words an operator can act on (the relay's reply when it gave one). */
export function describeSmtpError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const e = error as Error & { code?: string; response?: string; responseCode?: number; command?: string };
  const parts = [e.message];
  if (e.code && !e.message.includes(e.code)) parts.push(`(${e.code})`);
  return parts.join(' ').slice(0, 500);
}

/** The CA file's text, read once at start. */
export function readCaFile(path: string | undefined): string | undefined {
  return path ? readFileSync(path, 'utf8') : undefined;
}
