import { html, type Html } from '../../util/html.js';
import type { LabelPolicy } from '../../model/records.js';
import type { View } from '../../util/readonly.js';
import { fillPlaceholders, type MessageText } from '../../zitadel/message-texts.js';
import type { OutgoingMail } from './smtp-sender.js';

/**
 * A mail from its texts: the placeholders filled, every text escaped into a plain HTML layout in
 * the org's colours (the label policy), with the action as a button and as a link written out, and
 * a plain-text part with the same words. Nothing of a text or a value reaches the HTML unescaped.
 */
const DEFAULT_PRIMARY = '#5469d4';
const DEFAULT_BACKGROUND = '#fafafa';
const DEFAULT_FONT = '#000000';

/** ZITADEL's texts may break lines with `<br>`: kept as line breaks, everything else is text. */
function paragraphs(text: string): Html[] {
  return text.split(/<br\s*\/?>/i).map((line) => html`${line}<br>`);
}

export function renderMail(
  to: string,
  language: string,
  texts: MessageText,
  values: Readonly<Record<string, string>>,
  label: View<LabelPolicy>,
  action?: { url: string },
  /** The org's logo (its label policy's), an absolute URL. */
  logoUrl?: string,
): OutgoingMail {
  const fill = (t: string) => fillPlaceholders(t, values).trim();
  const t = {
    title: fill(texts.title),
    preHeader: fill(texts.preHeader),
    subject: fill(texts.subject),
    greeting: fill(texts.greeting),
    text: fill(texts.text),
    buttonText: fill(texts.buttonText),
    footerText: fill(texts.footerText),
  };
  const primary = label.primaryColor || DEFAULT_PRIMARY;
  const background = label.backgroundColor || DEFAULT_BACKGROUND;
  const font = label.fontColor || DEFAULT_FONT;
  const body = html`<!doctype html>
<html lang="${language}">
<head><meta charset="utf-8"><title>${t.title}</title></head>
<body style="margin:0;padding:24px;background:${background};color:${font};font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif">
<span style="display:none">${t.preHeader}</span>
<div style="max-width:560px;margin:0 auto">
${logoUrl ? html`<p><img src="${logoUrl}" alt="" style="max-height:48px;max-width:240px"></p>` : ''}
<h1 style="font-size:20px">${t.title}</h1>
<p>${t.greeting}</p>
<p>${paragraphs(t.text)}</p>
${
  action
    ? html`<p><a href="${action.url}" style="display:inline-block;padding:10px 18px;background:${primary};color:#ffffff;text-decoration:none;border-radius:6px">${t.buttonText}</a></p>
<p style="font-size:12px">${action.url}</p>`
    : ''
}
${t.footerText ? html`<p style="font-size:12px">${paragraphs(t.footerText)}</p>` : ''}
</div>
</body>
</html>`;
  const plain = [t.greeting, '', t.text.replace(/<br\s*\/?>/gi, '\n'), ...(action ? ['', `${t.buttonText}: ${action.url}`] : []), ...(t.footerText ? ['', t.footerText] : [])].join('\n');
  return { to, subject: t.subject, html: body.text, text: plain };
}
