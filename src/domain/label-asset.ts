/**
 * What a label policy's images and font may be: the slot (ZITADEL's assets API: logo and icon, each
 * light and dark, and the font), the largest file, and the types Sesame serves, told by the file's
 * own first bytes (a declared Content-Type is not trusted). SVG is not taken: a logo shows on the
 * login pages and in mails, where a picture must not be able to run anything.
 */
export type LabelAssetSlot = 'logo' | 'logoDark' | 'icon' | 'iconDark' | 'font';

export const LABEL_ASSET_SLOTS: readonly LabelAssetSlot[] = ['logo', 'logoDark', 'icon', 'iconDark', 'font'];

/** The largest image or font (bytes). */
export const MAX_LABEL_ASSET_BYTES = 512 * 1024;

const starts = (bytes: Uint8Array, ...sig: number[]) => sig.every((b, i) => bytes[i] === b);
const ascii = (bytes: Uint8Array, at: number, text: string) => [...text].every((c, i) => bytes[at + i] === c.charCodeAt(0));

/** The type of an image or font by its magic bytes; undefined for anything else. */
export function sniffAssetType(bytes: Uint8Array): string | undefined {
  if (starts(bytes, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(bytes, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) return 'image/gif';
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return 'image/webp';
  if (ascii(bytes, 0, 'wOF2')) return 'font/woff2';
  if (ascii(bytes, 0, 'wOFF')) return 'font/woff';
  if (starts(bytes, 0x00, 0x01, 0x00, 0x00) || ascii(bytes, 0, 'true')) return 'font/ttf';
  if (ascii(bytes, 0, 'OTTO')) return 'font/otf';
  return undefined;
}

/** Why a file cannot fill a slot, or undefined when it can (with its type). */
export function assetProblem(slot: LabelAssetSlot, bytes: Uint8Array): { problem: string } | { type: string } {
  if (bytes.length === 0) return { problem: 'the file is empty' };
  if (bytes.length > MAX_LABEL_ASSET_BYTES) return { problem: `the file is larger than ${MAX_LABEL_ASSET_BYTES / 1024} KiB` };
  const type = sniffAssetType(bytes);
  const font = slot === 'font';
  if (!type || type.startsWith('font/') !== font) {
    return { problem: font ? 'a font must be WOFF2, WOFF, TrueType or OpenType' : 'an image must be PNG, JPEG, GIF or WebP (SVG is not taken)' };
  }
  return { type };
}

/** Where Sesame serves a stored image or font (public: the login pages and mails show them). */
export const assetPath = (id: string) => `/ui/login/resources/asset/${id}`;
