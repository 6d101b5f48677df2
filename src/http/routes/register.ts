import type { Editor } from '../../model/activity.js';
import { ApiError } from '../../model/errors.js';
import { bearerToken, challenge } from '../../protocol/bearer.js';
import { metadataError } from '../../protocol/client-metadata.js';
import { OAuthError } from '../../protocol/errors.js';
import { invalidToken, REGISTRATION_PATH, registrationSettingsInForce, type ClientRegistrationPorts } from '../../services/client-registration.js';
import type { DynamicRegistrationSettings } from '../../actors/settings.js';
import { addressLimitKey } from '../../util/address-key.js';
import { clock } from '../../util/clock.js';
import type { View } from '../../util/readonly.js';
import { jsonNoStore } from '../responses.js';
import type { FlowView } from '../../services/ports.js';
import type { Request, Response, Route } from '../types.js';
import { authenticateCaller, type CallerPorts } from '../admin/caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type RegisterPorts = Pick<FlowView, 'settings' | 'failureWindows' | 'clientRegistrations'> & CallerPorts;

/** A registration is a few kilobytes; the bound is enforced before the body is read and parsed. */
const MAX_BODY = 64 * 1024;
const HOUR_MS = 60 * 60_000;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text (UTF-8, RFC 8259 §8.1; parsed by the registrar); one that is not is bad metadata (RFC 7591 §3.2.2), not a server error. */
function jsonText(req: Request): string {
  try {
    return UTF8.decode(req.body);
  } catch {
    throw metadataError('the body is not JSON in UTF-8');
  }
}

/** The Bearer token of the request, if it sent one (a malformed or repeated header is a wrong token). */
function presentedToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const token = req.repeatedHeaders.has('authorization') ? undefined : bearerToken(header);
  if (token === undefined) throw invalidToken('invalid authorization header: one Bearer token expected');
  return token;
}

/** The pattern of a registered client's own URI (RFC 7592). */
export const REGISTERED_CLIENT_PATTERN = `${REGISTRATION_PATH}/:clientId`;

/**
 * The checks before an upload, by pattern: registration off (404), or no token where one is
 * needed (401). Also run by HTTP acceptor threads on their copy of the settings (src/threads/).
 */
export function registrationPrechecks(ctx: Pick<ClientRegistrationPorts, 'settings'>): Map<string, (req: Request) => void> {
  const settingsInForce = () => registrationSettingsInForce(ctx);
  return new Map([
    [
      REGISTRATION_PATH,
      (req: Request) => {
        if (!settingsInForce().allowUnauthenticated && req.headers.authorization === undefined) throw invalidToken('an initial access token is required to register');
      },
    ],
    [
      REGISTERED_CLIENT_PATTERN,
      (req: Request) => {
        settingsInForce();
        if (presentedToken(req) === undefined) throw invalidToken('registration access token missing');
      },
    ],
  ]);
}

/**
 * Who registers without an initial access token, or manages a client with its registration access
 * token: nobody the directory knows (the activity log's editor `''`), from the client's address.
 */
const holderOf = (req: Request): Editor => ({ userId: '', service: 'registration', address: req.peer });

/**
 * POST /oauth/v2/register (RFC 7591) and GET/PUT/DELETE /oauth/v2/register/{client_id} (RFC 7592),
 * while the dynamic client registration setting is on (404 otherwise). Registering takes an
 * initial access token (a PAT or management access token of a user who may write apps in the
 * configured project, as the management API checks it) unless unauthenticated registration is
 * allowed; then each source address (an IPv6 one by its /64) may try a few times an hour.
 */
export function registrationRoutes(ctx: RegisterPorts): Route[] {
  const prechecks = registrationPrechecks(ctx);
  // The decisions on the apps are the directory writer's (on an acceptor thread, asked of the main thread).
  const registrations = ctx.clientRegistrations;
  // Counted in the store (every thread alike). The limit is a setting: a window of its own
  // (counting from zero) when it changes.
  const limiterFor = (max: number) => ctx.failureWindows.window(`registration-${max}`, max, HOUR_MS);

  /** An initial access token of a user allowed to add apps to the configured project. */
  const authorizeRegistrant = async (req: Request, settings: View<DynamicRegistrationSettings>): Promise<Editor> => {
    if (presentedToken(req) === undefined) throw invalidToken('an initial access token is required to register');
    let caller;
    try {
      caller = await authenticateCaller(ctx, req);
    } catch (error) {
      if (error instanceof ApiError && error.kind === 'Unauthenticated') throw invalidToken('initial access token invalid or expired');
      throw error;
    }
    if (!caller.can('project.app.write', { orgId: settings.orgId, projectId: settings.projectId })) {
      throw new OAuthError('insufficient_scope', "the initial access token's user may not add apps to the project of registered clients", {
        headers: { 'WWW-Authenticate': challenge('Bearer', { error: 'insufficient_scope' }) },
      });
    }
    return caller.by;
  };

  /** Open registration: counted per source address, refused while the address is over its limit. */
  const admitAddress = async (req: Request, settings: View<DynamicRegistrationSettings>) => {
    const limiter = limiterFor(settings.registrationsPerAddressPerHour);
    const address = addressLimitKey(req.peer ?? '');
    const now = clock.now();
    const blockedFor = await limiter.blockedFor(address, now);
    if (blockedFor > 0) {
      throw new OAuthError('temporarily_unavailable', 'too many registrations from this address; try again later', {
        status: 429,
        headers: { 'Retry-After': String(Math.ceil(blockedFor / 1000)) },
      });
    }
    await limiter.fail(address, now);
  };

  const register = async (req: Request): Promise<Response> => {
    const settings = registrationSettingsInForce(ctx);
    const anonymous = settings.allowUnauthenticated && req.headers.authorization === undefined;
    let by: Editor = holderOf(req);
    if (anonymous) await admitAddress(req, settings);
    else by = await authorizeRegistrant(req, settings);
    const answer = await registrations.register(jsonText(req), { anonymous, by });
    return jsonNoStore(201, answer.body);
  };

  const clientId = (req: Request) => req.params[0] ?? '';
  return [
    {
      pattern: REGISTRATION_PATH,
      errorStyle: 'oauth',
      maxBody: MAX_BODY,
      peerAddress: true,
      // Off, or a token required and none sent: answered before a body is uploaded.
      beforeBody: prechecks.get(REGISTRATION_PATH)!,
      methods: { POST: register },
    },
    {
      pattern: REGISTERED_CLIENT_PATTERN,
      errorStyle: 'oauth',
      maxBody: MAX_BODY,
      peerAddress: true,
      beforeBody: prechecks.get(REGISTERED_CLIENT_PATTERN)!,
      methods: {
        GET: async (req) => jsonNoStore(200, (await registrations.read(clientId(req), presentedToken(req))).body),
        PUT: async (req) => jsonNoStore(200, (await registrations.update(clientId(req), presentedToken(req), jsonText(req), holderOf(req))).body),
        DELETE: async (req) => {
          await registrations.remove(clientId(req), presentedToken(req), holderOf(req));
          return { status: 204, headers: { 'Cache-Control': 'no-store' } };
        },
      },
    },
  ];
}
