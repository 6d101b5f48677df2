import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { INSTANCE_POLICY, type MessageTexts } from '../../model/records.js';
import { changedDetails, rfc3339, viewDetails } from '../../zitadel/details.js';
import { invalidArgument, notFound } from '../../model/errors.js';
import {
  DEFAULT_MESSAGE_TEXTS,
  LANGUAGE_TAG,
  MAX_MESSAGE_LANGUAGES,
  MESSAGE_LANGUAGES,
  MESSAGE_TYPES,
  messageTextSchema,
  setFields,
  type MessageLanguage,
  type MessageText,
  type MessageType,
} from '../../zitadel/message-texts.js';
import { readBody } from '../../zitadel/validation.js';
import { apiRoute, ok } from './endpoint.js';
import type { Caller, CallerPorts } from './caller.js';
import type { Request } from '../types.js';
import type { View } from '../../util/readonly.js';
import { clock } from '../../util/clock.js';

/** What this module uses of the wired parts (src/app.ts). */
export type MessageTextsPorts = Pick<Ports, 'orgs'> & CallerPorts;

/**
 * Message texts (ZITADEL's text API): an org's own texts per message type and language
 * (`/management/v1/text/message/<type>/<language>`: GET, PUT, DELETE back to the default), the
 * default an org without its own gets (`/management/v1/text/default/message/…`), and the
 * instance's texts (`/admin/v1/text/message/…`; `/admin/v1/text/default/message/…` is Sesame's
 * built-in text). A field left empty falls back to the text below it. Types Sesame does not mail
 * (SMS, passwordless, domain claims, invitations) are kept and carried by export and import.
 */
const EMPTY: MessageText = { title: '', preHeader: '', subject: '', greeting: '', text: '', buttonText: '', footerText: '' };

function typeAndLanguage(req: Request): { type: MessageType; language: string } {
  const type = MESSAGE_TYPES.find((t) => t.path === req.params[0]);
  if (!type) throw notFound('TEXT-Typ3s', `no message type "${req.params[0]}" (one of ${MESSAGE_TYPES.map((t) => t.path).join(', ')})`);
  const language = (req.params[1] ?? '').toLowerCase();
  if (!LANGUAGE_TAG.test(language)) throw invalidArgument('TEXT-L4ng1', `"${req.params[1]}" is not a language tag such as "de"`);
  return { type, language };
}

function builtIn(type: MessageType, language: string): MessageText {
  const texts = DEFAULT_MESSAGE_TEXTS[(MESSAGE_LANGUAGES as readonly string[]).includes(language) ? (language as MessageLanguage) : 'en'] as Record<string, MessageText>;
  return texts[type.kind] ?? EMPTY;
}

export function messageTextRoutes(ctx: MessageTextsPorts): Route[] {
  const textsOf = (owner: string): View<MessageTexts> => {
    const own = owner === INSTANCE_POLICY ? true : ctx.orgs.hasOwnPolicy('messageTexts', owner);
    return own ? ctx.orgs.policy('messageTexts', owner).policy : {};
  };
  /** What an owner without its own text gets: the instance's over Sesame's for an org, Sesame's for the instance. */
  const fallback = (owner: string, type: MessageType, language: string): MessageText => {
    const base = builtIn(type, language);
    return owner === INSTANCE_POLICY ? base : { ...base, ...textsOf(INSTANCE_POLICY)[type.kind]?.[language] };
  };
  const read = (owner: string) => (req: Request) => {
    const { type, language } = typeAndLanguage(req);
    const own = textsOf(owner)[type.kind]?.[language];
    const record = ctx.orgs.policy('messageTexts', owner).record;
    const text = { ...fallback(owner, type, language), ...own };
    return ok({ customText: { ...(own && record ? { details: viewDetails(record, owner || undefined) } : {}), ...text, language, isDefault: own === undefined } });
  };
  const write = (caller: Caller, owner: string) => async (req: Request) => {
    const { type, language } = typeAndLanguage(req);
    const fields = setFields(readBody(req, messageTextSchema));
    const current = textsOf(owner);
    const languages = Object.keys(current[type.kind] ?? {});
    if (!languages.includes(language) && languages.length >= MAX_MESSAGE_LANGUAGES) {
      throw invalidArgument('TEXT-L4ng2', `the ${type.path} message has texts in ${MAX_MESSAGE_LANGUAGES} languages, the most Sesame keeps: remove one first`);
    }
    const next: MessageTexts = { ...current, [type.kind]: { ...current[type.kind], [language]: fields } } as MessageTexts;
    const record = await ctx.orgs.by(caller.by).setPolicy('messageTexts', owner, next, 'either', true);
    return ok({ details: changedDetails(record, owner || undefined) });
  };
  const reset = (caller: Caller, owner: string) => async (req: Request) => {
    const { type, language } = typeAndLanguage(req);
    const current = textsOf(owner);
    if (current[type.kind]?.[language] !== undefined) {
      const { [language]: _removed, ...rest } = current[type.kind]!;
      await ctx.orgs.by(caller.by).setPolicy('messageTexts', owner, { ...current, [type.kind]: rest } as MessageTexts, 'either', true);
    }
    return ok({ details: { sequence: '0', changeDate: rfc3339(clock.now()), resourceOwner: owner || undefined } });
  };
  const orgRead = (caller: Caller) => {
    caller.require('policy.read');
    ctx.orgs.requireOrg(caller.orgId);
    return caller.orgId;
  };
  const orgWrite = (caller: Caller) => {
    caller.require('policy.write');
    ctx.orgs.requireOrg(caller.orgId);
    return caller.orgId;
  };
  return [
    apiRoute(ctx, '/management/v1/text/message/:type/:language', {
      GET: (req, caller) => read(orgRead(caller))(req),
      PUT: (req, caller) => write(caller, orgWrite(caller))(req),
      DELETE: (req, caller) => reset(caller, orgWrite(caller))(req),
    }),
    apiRoute(ctx, '/management/v1/text/default/message/:type/:language', {
      GET: (req, caller) => {
        orgRead(caller);
        const { type, language } = typeAndLanguage(req);
        return ok({ customText: { ...fallback(caller.orgId, type, language), language, isDefault: true } });
      },
    }),
    apiRoute(ctx, '/admin/v1/text/message/:type/:language', {
      GET: (req, caller) => {
        caller.require('iam.policy.read', {});
        return read(INSTANCE_POLICY)(req);
      },
      PUT: (req, caller) => {
        caller.require('iam.policy.write', {});
        return write(caller, INSTANCE_POLICY)(req);
      },
      DELETE: (req, caller) => {
        caller.require('iam.policy.write', {});
        return reset(caller, INSTANCE_POLICY)(req);
      },
    }),
    apiRoute(ctx, '/admin/v1/text/default/message/:type/:language', {
      GET: (req, caller) => {
        caller.require('iam.policy.read', {});
        const { type, language } = typeAndLanguage(req);
        return ok({ customText: { ...builtIn(type, language), language, isDefault: true } });
      },
    }),
  ];
}
