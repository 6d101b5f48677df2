import { requirePasskeysAllowed } from '../../domain/sign-in-policy.js';
import { invalidArgument, notFound } from '../../model/errors.js';
import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { addHumanSchema, importHumanSchema } from '../../zitadel/users.js';
import { addedDetails } from '../../zitadel/details.js';
import { apiRoute, ok } from './endpoint.js';
import { normalizeOtpSecret, sealOtpSecret } from '../../crypto/otp-secret.js';
import { checkEncodedHash } from '../../domain/password-hashes.js';
import { requireComplexPassword } from '../../domain/password-complexity.js';
import { readBody } from '../../zitadel/validation.js';
import { CODE_RULES } from '../../services/mail/notifications.js';
import { formatProtoDuration } from '../../util/duration.js';
import type { CallerPorts } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type HumanUsersPorts = Pick<Ports, 'masterKey' | 'orgs' | 'pool' | 'notifications' | 'idps'> & CallerPorts;

/**
 * Human users: AddHumanUser and ImportHumanUser. Plaintext passwords are hashed in the worker
 * pool and never stored; imported hashes are stored as given once their format is recognized.
 */
export function humanUserRoutes(ctx: HumanUsersPorts): Route[] {
  return [
    apiRoute(ctx, '/management/v1/users/human', {
      POST: async (req, caller) => {
        caller.require('user.write');
        const input = readBody(req, addHumanSchema);
        ctx.orgs.requireOrg(caller.orgId);
        if (input.initialPassword) requireComplexPassword(input.initialPassword, ctx.orgs.policy('passwordComplexity', caller.orgId).policy);
        const passwordHash = input.initialPassword ? await ctx.pool.hashPassword(input.initialPassword) : undefined;
        const user = await ctx.orgs.by(caller.by).addUser(caller.orgId, { person: input, credentials: { passwordHash } });
        await ctx.notifications.welcome(user);
        return ok({ userId: user.id, details: addedDetails(user, user.orgId) });
      },
    }),
    apiRoute(ctx, '/management/v1/users/human/_import', {
      POST: async (req, caller) => {
        caller.require('user.write');
        const input = readBody(req, importHumanSchema);
        ctx.orgs.requireOrg(caller.orgId);
        // Login factors Sesame does not have are refused, not stored and ignored.
        const unsupported = [input.recoveryCodes.length > 0 && 'recoveryCodes (Sesame has no recovery codes)'].filter((x): x is string => typeof x === 'string');
        if (unsupported.length > 0) throw invalidArgument('USER-Uns1p', `not supported by Sesame: ${unsupported.join('; ')}`);
        if (input.requestPasswordlessRegistration) requirePasskeysAllowed(ctx.orgs.policy('login', caller.orgId).policy, "requestPasswordlessRegistration: the organization's");
        const encoded = input.hashedPassword?.value;
        // A plaintext password wins over a hash, as in ZITADEL's import.
        if (!input.password && encoded) checkEncodedHash(encoded);
        if (input.password) requireComplexPassword(input.password, ctx.orgs.policy('passwordComplexity', caller.orgId).policy);
        // Links to accounts at providers the org can use (its own or the instance's), made with the person.
        const links = input.idps.map((idp) => {
          if (!ctx.idps.find(idp.configId, caller.orgId)) throw notFound('IDP-0mnf2', `idps: identity provider ${idp.configId} not found (Errors.IDPConfig.NotExisting)`);
          if (!idp.externalUserId) throw invalidArgument('USER-L1nk0', 'idps: externalUserId must not be empty');
          return { idpId: idp.configId, externalUserId: idp.externalUserId, userName: idp.displayName };
        });
        const passwordHash = input.password ? await ctx.pool.hashPassword(input.password) : encoded || undefined;
        const user = await ctx.orgs.by(caller.by).addUserWithIdpLinks(
          caller.orgId,
          {
            ...(input.userId ? { id: input.userId } : {}),
            person: input,
            credentials: {
              passwordHash,
              passwordChangeRequired: input.passwordChangeRequired,
              otpSecretSealed: input.otpCode ? sealOtpSecret(ctx.masterKey, normalizeOtpSecret(input.otpCode)!) : undefined,
              // Someone who signs in at a provider can sign in: active, as ZITADEL makes them.
              ...(!passwordHash && links.length > 0 ? { state: 'USER_STATE_ACTIVE' as const } : {}),
            },
          },
          links,
        );
        // requestPasswordlessRegistration: a link to register a passkey, returned as ZITADEL returns it (and nothing mailed).
        if (input.requestPasswordlessRegistration) {
          const sent = await ctx.notifications.sendCode(user, 'passwordless', { returnLink: true });
          const lifetime = formatProtoDuration(CODE_RULES.passwordless.lifetimeMs);
          return ok({ userId: user.id, details: addedDetails(user, user.orgId), passwordlessRegistration: 'link' in sent ? { link: sent.link, lifetime, expiration: lifetime } : undefined });
        }
        await ctx.notifications.welcome(user);
        return ok({ userId: user.id, details: addedDetails(user, user.orgId) });
      },
    }),
  ];
}
