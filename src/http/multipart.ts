import busboy from 'busboy';
import { invalidArgument } from '../model/errors.js';
import type { Request } from './types.js';

/**
 * The file of an upload (ZITADEL's assets API): the `file` part of a multipart/form-data body, as
 * browsers and the console send it (busboy parses it), or the body itself when it is not multipart
 * (`curl --data-binary @logo.png`). Larger than `max` is refused.
 */
export function uploadedFile(req: Pick<Request, 'headers' | 'body'>, max: number): Promise<Uint8Array> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) {
    if (req.body.length > max) return Promise.reject(invalidArgument('ASSET-S1ze0', `the file is larger than ${max / 1024} KiB`));
    return Promise.resolve(new Uint8Array(req.body));
  }
  return uploadedForm(req, max).then(({ file }) => file);
}

/** A multipart/form-data body's `file` part and its text fields (a form with a file: the console's import). */
export function uploadedForm(req: Pick<Request, 'headers' | 'body'>, max: number): Promise<{ file: Uint8Array; fields: ReadonlyMap<string, string> }> {
  const type = req.headers['content-type'] ?? '';
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': type }, limits: { files: 1, fileSize: max, fields: 10, fieldSize: 4096, parts: 20 } });
    } catch {
      reject(invalidArgument('ASSET-F0rm0', 'the body is not multipart/form-data with a boundary'));
      return;
    }
    let file: Buffer | undefined;
    let tooLarge = false;
    const fields = new Map<string, string>();
    parser.on('field', (name, value) => {
      if (!fields.has(name)) fields.set(name, value);
    });
    parser.on('file', (name, stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => (name === 'file' ? chunks.push(chunk) : undefined));
      stream.on('limit', () => (tooLarge = true));
      stream.on('end', () => {
        if (name === 'file') file = Buffer.concat(chunks);
      });
    });
    parser.on('error', () => reject(invalidArgument('ASSET-F0rm1', 'the multipart body is malformed')));
    parser.on('close', () => {
      if (tooLarge) reject(invalidArgument('ASSET-S1ze0', `the file is larger than ${max / 1024} KiB`));
      else if (!file) reject(invalidArgument('ASSET-F1le0', 'no part named "file" in the form'));
      else resolve({ file: new Uint8Array(file), fields });
    });
    parser.end(req.body);
  });
}
