import { z } from 'zod';
import { ApiError, invalidArgument, notFound, preconditionFailed } from '../../model/errors.js';
import type { Deadline } from './deadline.js';

/**
 * Cloud object storage for export and import (`gcsOutput`, `dataOrgsGcs`, `dataOrgsv1Gcs`):
 * one object per bundle, through `@google-cloud/storage` with the credentials of the request's
 * base64 service-account JSON. With STORAGE_EMULATOR_HOST set the client talks to that emulator
 * instead (and needs no working credentials). The client library is loaded on first use only.
 */
export const gcsLocationSchema = z.object({
  bucket: z.string().trim().min(1, 'must not be empty').max(222),
  path: z.string().trim().min(1, 'must not be empty').max(1024),
  serviceaccountJson: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(64 * 1024),
});
export type GcsLocation = z.output<typeof gcsLocationSchema>;

interface ServiceAccount {
  projectId: string;
  clientEmail: string;
  privateKey: string;
}

/** Decodes the base64 service-account JSON; 400 when it is not one. */
export function parseServiceAccount(base64: string): ServiceAccount {
  let parsed: unknown;
  try {
    const text = Buffer.from(base64.replace(/\s+/g, ''), base64.includes('-') || base64.includes('_') ? 'base64url' : 'base64').toString('utf8');
    parsed = JSON.parse(text);
  } catch {
    throw invalidArgument('GCS-S4cc1', 'serviceaccountJson must be the base64 encoding of a service-account JSON key file');
  }
  const sa = parsed as Record<string, unknown>;
  if (!sa || typeof sa !== 'object' || typeof sa.client_email !== 'string' || typeof sa.private_key !== 'string') {
    throw invalidArgument('GCS-S4cc2', 'serviceaccountJson: the key file needs client_email and private_key');
  }
  return { projectId: typeof sa.project_id === 'string' ? sa.project_id : '', clientEmail: sa.client_email, privateKey: sa.private_key };
}

async function bucketFile(location: GcsLocation, deadline: Deadline) {
  const account = parseServiceAccount(location.serviceaccountJson);
  const { Storage } = await import('@google-cloud/storage');
  const storage = new Storage({
    ...(account.projectId ? { projectId: account.projectId } : {}),
    credentials: { client_email: account.clientEmail, private_key: account.privateKey },
    retryOptions: { maxRetries: 2, totalTimeout: Math.max(1, Math.ceil(deadline.remainingMs / 1000)) },
  });
  return storage.bucket(location.bucket).file(location.path);
}

const where = (l: GcsLocation) => `gs://${l.bucket}/${l.path}`;

function storageError(error: unknown, location: GcsLocation, action: string): ApiError {
  if (error instanceof ApiError) return error;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 404) return notFound('GCS-N0tF1', `${where(location)} not found`);
  if (code === 401 || code === 403) return preconditionFailed('GCS-D3n1d', `cloud storage refused to ${action} ${where(location)}: ${message}`);
  return preconditionFailed('GCS-F41l1', `cannot ${action} ${where(location)}: ${message}`);
}

/** Reads the object into memory, refusing more than `maxBytes`. */
export async function readObject(location: GcsLocation, deadline: Deadline, maxBytes: number): Promise<Buffer> {
  const file = await bucketFile(location, deadline);
  const stream = file.createReadStream({ validation: false });
  const work = new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        stream.destroy();
        reject(invalidArgument('GCS-S1z31', `${where(location)} is larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    stream.on('error', (error) => reject(storageError(error, location, 'read')));
    stream.on('end', () => resolve(Buffer.concat(chunks, size)));
  });
  try {
    return await deadline.race(work, `reading ${where(location)}`, () => stream.destroy());
  } catch (error) {
    throw storageError(error, location, 'read');
  }
}

/** Writes the bundle as one object (resumable upload above 8 MiB). */
export async function writeObject(location: GcsLocation, data: Buffer, deadline: Deadline): Promise<void> {
  const file = await bucketFile(location, deadline);
  const work = file.save(data, { resumable: data.length > 8 * 1024 * 1024, contentType: 'application/json', validation: false });
  try {
    await deadline.race(work, `writing ${where(location)}`);
  } catch (error) {
    throw storageError(error, location, 'write');
  }
}
