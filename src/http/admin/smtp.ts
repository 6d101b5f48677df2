import { z } from 'zod';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import type { SmtpConfig, SmtpSettings } from '../../actors/smtp-configs.js';
import { addedDetails, changedDetails, listDetails, rfc3339, viewDetails } from '../../zitadel/details.js';
import { invalidArgument, notFound, preconditionFailed } from '../../model/errors.js';
import { EMAIL } from '../../domain/human-users.js';
import { INSTANCE_POLICY } from '../../model/records.js';
import { apiRoute, ok } from './endpoint.js';
import { readBody, text } from '../../zitadel/validation.js';
import { describeSmtpError } from '../../services/mail/smtp-sender.js';
import type { CallerPorts } from './caller.js';
import type { View } from '../../util/readonly.js';
import { clock } from '../../util/clock.js';

/** What this module uses of the wired parts (src/app.ts). */
export type SmtpPorts = Pick<Ports, 'smtpConfigs' | 'mailer' | 'orgs'> & CallerPorts;

/**
 * The instance's SMTP configurations, ZITADEL admin v1: add, update, set the password, activate
 * (the one active before is deactivated), deactivate, remove, get (the active one, or by id), list,
 * and test (a mail sent at once to a given address; the relay's refusal is the answer's message).
 * The password is write-only. Instance roles only (`iam.write` / `iam.read`). Beside ZITADEL's:
 * the mails queued and given up (`POST /admin/v1/mails/_search`) and a retry of one given up.
 */
const address = () =>
  z
    .string()
    .trim()
    .max(200)
    .refine((v) => EMAIL.test(v), 'must be an email address');
const settingsSchema = z.object({
  senderAddress: address(),
  senderName: text(200),
  replyToAddress: text(200).refine((v) => v === '' || EMAIL.test(v), 'must be an email address'),
  tls: z.boolean().default(false),
  host: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(300)
    .refine((h) => /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(h), 'must be host:port'),
  user: text(300),
  description: text(200),
});
const addSchema = settingsSchema.extend({ password: text(1000) });
const updateSchema = settingsSchema.extend({ password: z.string().max(1000).optional() });
const passwordSchema = z.object({ password: text(1000) });
const testSchema = settingsSchema.extend({ password: text(1000), receiverAddress: address(), id: text(200) });
const testByIdSchema = z.object({ receiverAddress: address() });
const mailsSearchSchema = z.object({ limit: z.number().int().min(1).max(1000).default(100) });

function configView(config: View<SmtpConfig>) {
  return {
    details: viewDetails(config, undefined),
    id: config.id,
    description: config.description,
    senderAddress: config.senderAddress,
    senderName: config.senderName,
    replyToAddress: config.replyToAddress,
    tls: config.tls,
    host: config.host,
    user: config.user,
    state: config.state,
  };
}

export function smtpRoutes(ctx: SmtpPorts): Route[] {
  /** The instance's domain policy may ask that the sender be on the instance's domain. */
  const checkSender = (settings: SmtpSettings) => {
    if (!ctx.orgs.policy('domain', INSTANCE_POLICY).policy.smtpSenderAddressMatchesInstanceDomain) return;
    const domain = settings.senderAddress.slice(settings.senderAddress.lastIndexOf('@') + 1).toLowerCase();
    const instanceDomain = ctx.orgs.instanceDomain.toLowerCase();
    if (domain !== instanceDomain && !domain.endsWith(`.${instanceDomain}`)) {
      throw invalidArgument('INST-xb9IT', `senderAddress must be on the instance's domain ${instanceDomain} (the domain policy's smtpSenderAddressMatchesInstanceDomain)`);
    }
  };
  const settingsOf = ({ senderAddress, senderName, replyToAddress, tls, host, user, description }: z.output<typeof settingsSchema>): SmtpSettings => ({
    senderAddress,
    senderName,
    replyToAddress,
    tls,
    host,
    user,
    description,
  });
  /** A test mail, sent now: the relay's answer is the caller's. */
  const test = async (config: View<SmtpConfig>, password: string | undefined, receiver: string) => {
    try {
      await ctx.mailer.sendNow(config, password, {
        to: receiver,
        subject: 'Sesame SMTP test',
        text: 'This mail tests the SMTP configuration of your Sesame instance.',
        html: '<p>This mail tests the SMTP configuration of your Sesame instance.</p>',
      });
    } catch (error) {
      throw preconditionFailed('SMTP-p9kfs', `the test mail could not be sent: ${describeSmtpError(error)}`);
    }
    return ok({});
  };
  return [
    apiRoute(ctx, '/admin/v1/smtp', {
      GET: (_req, caller) => {
        caller.require('iam.read', {});
        const active = ctx.smtpConfigs.active();
        if (!active) throw notFound('SMTP-2Ggb7', 'no active SMTP configuration (Errors.SMTPConfig.NotFound)');
        return ok({ smtpConfig: configView(active) });
      },
      POST: async (req, caller) => {
        caller.require('iam.write', {});
        const input = readBody(req, addSchema);
        const settings = settingsOf(input);
        checkSender(settings);
        const config = await ctx.smtpConfigs.by(caller.by).add(settings, input.password);
        return ok({ id: config.id, details: addedDetails(config, undefined) });
      },
    }),
    apiRoute(ctx, '/admin/v1/smtp/_search', {
      POST: (_req, caller) => {
        caller.require('iam.read', {});
        const configs = ctx.smtpConfigs.all();
        return ok({ details: listDetails(configs.length), result: configs.map(configView) });
      },
    }),
    apiRoute(ctx, '/admin/v1/smtp/_test', {
      POST: async (req, caller) => {
        caller.require('iam.write', {});
        const input = readBody(req, testSchema);
        const settings = settingsOf(input);
        // A stored configuration's password is used when none is given (ZITADEL's `id`).
        const stored = input.id ? ctx.smtpConfigs.get(input.id) : undefined;
        const password = input.password || (stored ? ctx.smtpConfigs.password(stored) : undefined);
        const now = clock.now();
        return test({ ...settings, id: input.id, state: 'SMTP_CONFIG_INACTIVE', createdAt: now, changedAt: now, sequence: 0 }, password, input.receiverAddress);
      },
    }),
    apiRoute(ctx, '/admin/v1/smtp/:id', {
      GET: (req, caller) => {
        caller.require('iam.read', {});
        return ok({ smtpConfig: configView(ctx.smtpConfigs.get(req.params[0]!)) });
      },
      PUT: async (req, caller) => {
        caller.require('iam.write', {});
        const input = readBody(req, updateSchema);
        const settings = settingsOf(input);
        checkSender(settings);
        const config = await ctx.smtpConfigs.by(caller.by).update(req.params[0]!, settings, input.password);
        return ok({ details: changedDetails(config, undefined) });
      },
      DELETE: async (req, caller) => {
        caller.require('iam.write', {});
        await ctx.smtpConfigs.by(caller.by).remove(req.params[0]!);
        return ok({ details: { sequence: '0', changeDate: rfc3339(clock.now()) } });
      },
    }),
    apiRoute(ctx, '/admin/v1/smtp/:id/password', {
      PUT: async (req, caller) => {
        caller.require('iam.write', {});
        const input = readBody(req, passwordSchema);
        const current = ctx.smtpConfigs.get(req.params[0]!);
        const config = await ctx.smtpConfigs.by(caller.by).update(req.params[0]!, current, input.password);
        return ok({ details: changedDetails(config, undefined) });
      },
    }),
    apiRoute(ctx, '/admin/v1/smtp/:id/_activate', {
      POST: async (req, caller) => {
        caller.require('iam.write', {});
        const config = await ctx.smtpConfigs.by(caller.by).activate(req.params[0]!);
        // Mails waiting for a relay go now rather than at their next retry.
        await ctx.mailer.dueNow();
        return ok({ details: changedDetails(config, undefined) });
      },
    }),
    apiRoute(ctx, '/admin/v1/smtp/:id/_deactivate', {
      POST: async (req, caller) => {
        caller.require('iam.write', {});
        const config = await ctx.smtpConfigs.by(caller.by).deactivate(req.params[0]!);
        return ok({ details: changedDetails(config, undefined) });
      },
    }),
    apiRoute(ctx, '/admin/v1/smtp/:id/_test', {
      POST: async (req, caller) => {
        caller.require('iam.write', {});
        const input = readBody(req, testByIdSchema);
        const config = ctx.smtpConfigs.get(req.params[0]!);
        return test(config, ctx.smtpConfigs.password(config), input.receiverAddress);
      },
    }),
    apiRoute(ctx, '/admin/v1/mails/_search', {
      POST: async (req, caller) => {
        caller.require('iam.read', {});
        const input = readBody(req, mailsSearchSchema);
        const rows = await ctx.mailer.outbox.list(input.limit);
        return ok({
          details: listDetails(rows.length),
          result: rows.map((row) => ({
            id: row.id,
            state: row.failedAt === undefined ? 'MAIL_STATE_QUEUED' : 'MAIL_STATE_FAILED',
            kind: row.kind,
            orgId: row.orgId,
            userId: row.userId,
            recipient: row.to,
            language: row.language,
            queuedAt: rfc3339(row.queuedAt),
            attempts: row.failures,
            nextAttemptAt: row.failedAt === undefined ? rfc3339(row.dueAt) : undefined,
            failedAt: row.failedAt === undefined ? undefined : rfc3339(row.failedAt),
            lastError: row.lastError,
          })),
        });
      },
    }),
    apiRoute(ctx, '/admin/v1/mails/:id/_retry', {
      POST: async (req, caller) => {
        caller.require('iam.write', {});
        const row = await ctx.mailer.outbox.retry(req.params[0]!, clock.now());
        if (!row) throw notFound('MAIL-n0tf1', `no mail ${req.params[0]} was given up`);
        return ok({});
      },
    }),
  ];
}
