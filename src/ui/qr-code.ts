import QRCode from 'qrcode';

/**
 * A QR code as an SVG data URL for an <img>: rendered on the server, so enrollment works without
 * JavaScript, and allowed by the pages' `img-src data:` policy. (qrcode: the widely used encoder.)
 */
export async function qrCodeDataUrl(text: string): Promise<string> {
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}
