import { secretMatches, sha256 } from '../../util/hash.js';
import type { AuthRequestView, LoginStep } from '../../actors/auth-requests.js';
import type { FoundProvider } from '../../actors/identity-providers.js';
import type { FlowView } from '../../services/ports.js';
import { Upstreams, UpstreamError } from '../../services/federation/upstream.js';
import { ldapSignIn } from '../../services/federation/ldap.js';
import type { ExternalIdentity } from '../../domain/external-identity.js';
import { beginningAt } from '../../domain/revocation-horizon.js';
import { EMAIL } from '../../domain/human-users.js';
import { ApiError } from '../../model/errors.js';
import { INSTANCE_POLICY, type UserRecord } from '../../model/records.js';
import { parseUrlEncoded, type Form } from '../../protocol/form.js';
import { externalChoicePage, ldapLoginPage, termsToAccept, type IdpButton, type PageContext, type RegisterValues } from '../../ui/pages.js';
import type { TextKey } from '../../ui/i18n.js';
import { htmlResponse, redirectResponse } from '../html.js';
import type { Request, Response, Route } from '../types.js';
import { log } from '../../util/log.js';
import { recordSignInFailure } from '../../observability/recorder.js';
import type { View } from '../../util/readonly.js';

/**
 * Sign-in with identity providers at the login (ZITADEL's external login): the buttons of the
 * providers the login policy offers, the round trip (services/federation/upstream.ts), and what
 * follows the callback. An account linked to a person signs them in (the first factor; their
 * second factor and the rest of the sign-in policy follow). An account linked to nobody is linked
 * automatically only by an email both the provider and Sesame verified (`AUTO_LINKING_OPTION_EMAIL`),
 * is made a person without asking (`isAutoCreation`), or waits for the person's choice: create an
 * account (`isCreationAllowed`), or sign in to an existing one to link it (`isLinkingAllowed`),
 * linked only once that sign-in has passed all its steps. A provider no longer offered (removed,
 * or off the login policy) signs nobody in, on every thread: the policy is read at each step.
 */
export const CALLBACK_PATH = '/ui/login/login/externalidp/callback';

/** Wrong passwords per LDAP provider and user name within the window before the form refuses that name for a while. */
const LDAP_FAILURES = 10;
const LDAP_WINDOW_MS = 15 * 60_000;

/** What the federation uses of the login's flow (src/http/routes/login.ts). */
export interface LoginFlow {
  agent: { cookie: string; agentId: string; locale: string };
  auth: AuthRequestView;
  page: PageContext;
  /** The browser's address (the activity log's). */
  peer: string | undefined;
}

export interface LoginKit<F extends LoginFlow> {
  flowOf(req: Request, form: Form | undefined): Promise<F | Response>;
  show(flow: F, error?: string, status?: number, info?: string): Promise<Response>;
  proceed(flow: F, userId: string, headers?: Record<string, string>): Promise<Response>;
  renewCookie(flow: F): Promise<Record<string, string>>;
  expired(agent: F['agent'] | { locale: string }): Response;
  backToStep(flow: F): Response;
  t(flow: F, key: TextKey, vars?: Record<string, string>): string;
  post(handler: (flow: F, form: Form, req: Request) => Response | Promise<Response>): (req: Request) => Promise<Response>;
  atStep(step: LoginStep, handler: (flow: F, form: Form, req: Request) => Response | Promise<Response>): (req: Request) => Promise<Response>;
  route(pattern: string, methods: Route['methods']): Route;
  /** The org a new person of this request joins (the requested org, the app's, the instance's default). */
  registrationOrgId(flow: F): string;
}

export type FederationPorts = Pick<FlowView, 'idps' | 'authRequests' | 'orgs' | 'loginDirectory' | 'issuer' | 'failureWindows'>;

/** The login's part for identity providers: its routes, the buttons of a page, and the link a finished sign-in makes. */
export function federation<F extends LoginFlow>(ctx: FederationPorts, kit: LoginKit<F>) {
  const upstreams = new Upstreams(ctx.idps, `${ctx.issuer}${CALLBACK_PATH}`);

  /** The org whose login policy decides what a request offers: the requested org, else the instance's. */
  const offeringOrg = (flow: F) => flow.auth.request.orgId ?? INSTANCE_POLICY;
  const offered = (flow: F, idpId: string): FoundProvider | undefined => ctx.idps.offeredBy(offeringOrg(flow)).find((f) => f.provider.id === idpId);

  /** An org's provider: signs in only people within the org. */
  const orgOwned = (found: FoundProvider) => found.owner !== INSTANCE_POLICY;
  /** A provider no instance administrator vouched for: reached at public addresses only. */
  const publicOnly = (found: FoundProvider) => found.provider.internalAllowed !== true;

  /** Whether the person holds roles outside the org: the instance's, another org's, a project of another org. */
  function reachesBeyond(userId: string, orgId: string): boolean {
    return ctx.orgs.memberships(userId).some((m) => {
      if (m.scope === `org:${orgId}`) return false;
      if (m.scope.startsWith('project:')) return ctx.orgs.orgOfProject(m.scope.slice('project:'.length)) !== orgId;
      return true;
    });
  }

  /** The buttons of the login name and password pages. */
  function buttons(flow: F): IdpButton[] {
    return ctx.idps.offeredBy(offeringOrg(flow)).map((f) => ({ id: f.provider.id, name: f.provider.name }));
  }

  /** `urn:zitadel:iam:org:idp:id:{id}`: the login goes straight to that provider, once per request. */
  function hintedProvider(flow: F): string | undefined {
    const prefix = 'urn:zitadel:iam:org:idp:id:';
    const scope = flow.auth.request.scopes.find((s) => s.startsWith(prefix));
    return scope && !flow.auth.upstreamStarted && offered(flow, scope.slice(prefix.length)) ? scope.slice(prefix.length) : undefined;
  }

  /** Sends the browser to a provider; the auth request remembers what its callback must match. */
  async function startAt(flow: F, idpId: string): Promise<Response> {
    const found = offered(flow, idpId);
    if (!found) return kit.show(flow, kit.t(flow, 'idp.notAllowed'));
    if (found.provider.kind === 'ldap') {
      await ctx.authRequests.enterLdap(flow.auth, idpId);
      return kit.backToStep(flow);
    }
    let start: Awaited<ReturnType<Upstreams['start']>>;
    try {
      start = await upstreams.start(found.provider, publicOnly(found), `${flow.auth.id}.`);
    } catch (error) {
      log.warn('identity provider unavailable', { idpId, error: String(error) });
      return kit.show(flow, kit.t(flow, 'idp.unavailable', { idp: found.provider.name }));
    }
    await ctx.authRequests.startUpstream(flow.auth, { idpId, ...start.secrets });
    return redirectResponse(start.url, {}, 303);
  }

  /** The provider sent the browser back: the round trip is checked and taken (once), and the account signs in or waits for a choice. */
  async function callback(req: Request): Promise<Response> {
    const query = parseUrlEncoded(req.query);
    const state = (query.get('state') ?? '').slice(0, 300);
    const authRequestId = state.slice(0, Math.max(0, state.indexOf('.')));
    // The request is found through the state (and must be this browser's, by its cookie).
    const found = await kit.flowOf({ ...req, query: authRequestId ? `authRequestID=${encodeURIComponent(authRequestId)}` : '' }, undefined);
    if (!('auth' in found)) return found;
    const flow = found;
    const trip = await ctx.authRequests.takeUpstream(flow.auth);
    // Compared in constant time (util/hash.ts's rule for presented secrets).
    if (!trip || !secretMatches(state, sha256(trip.state))) return kit.expired(flow.agent);
    const provider = offered(flow, trip.idpId);
    if (!provider) return kit.show(flow, kit.t(flow, 'idp.notAllowed'));
    let identity: ExternalIdentity;
    try {
      identity = await upstreams.finish(provider.provider, publicOnly(provider), new URL(`${upstreams.callbackUrl}?${req.query}`), trip);
    } catch (error) {
      recordSignInFailure('idp');
      const reason = error instanceof UpstreamError ? error.message : 'error';
      if (!(error instanceof UpstreamError)) log.warn('identity provider callback failed', { idpId: trip.idpId, error: String(error) });
      return kit.show(flow, kit.t(flow, 'idp.failed', { idp: provider.provider.name, reason: reason.slice(0, 300) }));
    }
    return signInWith(flow, provider, identity);
  }

  /**
   * Who may sign in for this request with an account of `provider`: an active person in the
   * requested org that offers it. An org's provider signs in that org's people only, and none who
   * holds roles beyond the org (an instance administrator, an owner elsewhere): its administrators
   * control the provider, and with it whoever it may sign in, so it may not reach anyone they could
   * not act on. Checked at every sign-in, since roles change after a provider or a link was made.
   */
  function refusal(flow: F, provider: FoundProvider, user: View<UserRecord>): TextKey | undefined {
    if (flow.auth.request.orgId !== undefined && user.orgId !== flow.auth.request.orgId) return 'external.wrongOrg';
    if (orgOwned(provider) && (user.orgId !== provider.owner || reachesBeyond(user.id, provider.owner))) return 'external.wrongOrg';
    if (!ctx.idps.usableBy(provider.provider.id, user.orgId)) return 'idp.notAllowed';
    if (user.state === 'USER_STATE_LOCKED') return 'password.locked';
    if (!ctx.orgs.isActive(user)) return 'error.inactive';
    return undefined;
  }

  async function signInLinked(flow: F, provider: FoundProvider, identity: ExternalIdentity, linked: View<UserRecord>): Promise<Response> {
    // Decided on the person as stored: an unlink, a lock or a deactivation on another thread or node counts.
    const user = await ctx.loginDirectory.from(flow.peer).linkedPerson(linked.id, identity);
    const refused = user ? refusal(flow, provider, user) : 'external.none';
    if (!user || refused) {
      recordSignInFailure('idp');
      return kit.show(flow, kit.t(flow, refused ?? 'external.none'));
    }
    if (provider.provider.options.isAutoUpdate) await ctx.loginDirectory.from(flow.peer).updateFromIdp(user.id, identity);
    await ctx.authRequests.passIdp(flow.auth, user.id, provider.provider.id, beginningAt(user));
    return kit.proceed(flow, user.id, await kit.renewCookie(flow));
  }

  const linkOf = (identity: ExternalIdentity) => ({ idpId: identity.idpId, externalUserId: identity.externalUserId, userName: identity.userName });

  async function signInWith(flow: F, provider: FoundProvider, identity: ExternalIdentity): Promise<Response> {
    const linked = ctx.orgs.findUserByIdpLink(identity.idpId, identity.externalUserId);
    if (linked) return signInLinked(flow, provider, identity, linked);
    const { options } = provider.provider;
    // Linked by an email both sides verified, to the one person in reach who has it.
    if (options.autoLinking === 'AUTO_LINKING_OPTION_EMAIL' && identity.emailVerified && identity.email) {
      const candidates = ctx.orgs.findUsersByContact(identity.email).filter((u) => u.human && refusal(flow, provider, u) === undefined);
      if (candidates.length === 1) {
        const user = candidates[0]!;
        const done = await ctx.loginDirectory.from(flow.peer).linkIdp(user.id, linkOf(identity), beginningAt(user)).catch(linkFailure);
        if (done) return signInLinked(flow, provider, identity, done);
      }
    }
    if (options.isCreationAllowed && options.isAutoCreation) {
      // Without names from the provider, the user name stands in (nobody is asked).
      const values = valuesOf(identity);
      const created = await create(flow, provider, identity, { ...values, firstName: values.firstName || identity.userName, lastName: values.lastName || values.firstName || identity.userName });
      if (!('error' in created)) return created.response;
    }
    await ctx.authRequests.awaitExternalChoice(flow.auth, identity);
    return kit.backToStep(flow);
  }

  /** A link another request made first (the account is linked now): nothing linked here. */
  const linkFailure = (error: unknown): undefined => {
    if (error instanceof ApiError && (error.kind === 'AlreadyExists' || error.kind === 'NotFound' || error.kind === 'FailedPrecondition')) return undefined;
    throw error;
  };

  const valuesOf = (identity: ExternalIdentity): RegisterValues => ({ firstName: identity.firstName, lastName: identity.lastName, userName: identity.userName, email: identity.email });

  /** The org a person made from an account joins: the provider's org, else the request's registration org. */
  const creationOrg = (flow: F, provider: FoundProvider) => (provider.owner !== INSTANCE_POLICY ? provider.owner : kit.registrationOrgId(flow));

  async function create(flow: F, provider: FoundProvider, identity: ExternalIdentity, values: RegisterValues): Promise<{ response: Response } | { error: TextKey; detail?: string }> {
    const orgId = creationOrg(flow, provider);
    if (flow.auth.request.orgId !== undefined && orgId !== flow.auth.request.orgId) return { error: 'external.wrongOrg' };
    if (!ctx.idps.usableBy(provider.provider.id, orgId)) return { error: 'idp.notAllowed' };
    const email = EMAIL.test(identity.email) ? identity.email : '';
    let user: View<UserRecord>;
    try {
      user = await ctx.loginDirectory.from(flow.peer).registerFromIdp(
        orgId,
        {
          userName: values.userName!,
          profile: {
            firstName: values.firstName!,
            lastName: values.lastName!,
            displayName: identity.displayName,
            nickName: identity.nickName,
            preferredLanguage: identity.preferredLanguage || flow.page.locale,
            gender: 'GENDER_UNSPECIFIED',
          },
          email: { email, isEmailVerified: email !== '' && identity.emailVerified },
          ...(identity.phone.startsWith('+') ? { phone: { phone: identity.phone, isPhoneVerified: identity.phoneVerified } } : {}),
        },
        linkOf(identity),
      );
    } catch (error) {
      if (!(error instanceof ApiError) || error.kind === 'Internal' || error.kind === 'Unavailable') throw error;
      // The account itself may have been linked meanwhile (a parallel sign-in): it signs in.
      const linked = ctx.orgs.findUserByIdpLink(identity.idpId, identity.externalUserId);
      if (linked) return { response: await signInLinked(flow, provider, identity, linked) };
      // A taken name: another may be chosen; anything else the provider's data or the org refused: said as it is.
      return error.kind === 'AlreadyExists' ? { error: 'external.taken' } : { error: 'external.refused', detail: error.message };
    }
    await ctx.authRequests.passIdp(flow.auth, user.id, provider.provider.id, beginningAt(user));
    return { response: await kit.proceed(flow, user.id, await kit.renewCookie(flow)) };
  }

  /** The account linked to nobody this sign-in is about, and its provider while it is still offered. */
  const externalOf = (flow: F) => {
    const identity = flow.auth.external as ExternalIdentity | undefined;
    return { identity, provider: identity ? offered(flow, identity.idpId) : undefined };
  };

  /** The choice page of an account linked to nobody. */
  function choicePage(flow: F, error?: string, values?: RegisterValues): Response {
    const { identity, provider } = externalOf(flow);
    if (!identity || !provider) return kit.expired(flow.agent);
    const { options } = provider.provider;
    const loginPolicy = ctx.orgs.policy('login', creationOrg(flow, provider)).policy;
    return htmlResponse(
      200,
      externalChoicePage(flow.page, {
        idpName: provider.provider.name,
        email: identity.email,
        values: values ?? valuesOf(identity),
        // Linking signs in to the existing account with its password.
        allowLink: options.isLinkingAllowed && loginPolicy.allowUsernamePassword,
        allowCreate: options.isCreationAllowed,
        error,
      }),
    );
  }

  /**
   * At the end of a sign-in to an existing account that the person chose to link an account at a
   * provider to: linked now (the provider still offered to the person's org, linking allowed).
   */
  async function linkChosen(flow: F, user: View<UserRecord>): Promise<void> {
    const identity = flow.auth.external;
    if (!identity) return;
    const provider = ctx.idps.find(identity.idpId, user.orgId);
    // Signed in to their account locally: with its password or its passkey.
    const passedAt = flow.auth.checks.passwordAt ?? flow.auth.checks.passwordlessAt;
    if (provider && passedAt !== undefined && provider.provider.options.isLinkingAllowed && refusal(flow, provider, user) === undefined) {
      await ctx.loginDirectory
        .from(flow.peer)
        .linkIdp(user.id, linkOf(identity as ExternalIdentity), passedAt)
        .catch(linkFailure);
    }
    await ctx.authRequests.dropExternal(flow.auth);
  }

  /** Wrong LDAP passwords per provider and user name, counted in the store for every thread: the directory's own lockout may be lax. */
  const ldapFailures = ctx.failureWindows.window('ldap-login', LDAP_FAILURES, LDAP_WINDOW_MS);

  /** The LDAP provider of this sign-in's form, while it is still offered. */
  const ldapProviderOf = (flow: F) => (flow.auth.ldapIdpId ? offered(flow, flow.auth.ldapIdpId) : undefined);

  function ldapPage(flow: F, error?: string, username = ''): Response {
    const provider = ldapProviderOf(flow);
    if (!provider) return kit.expired(flow.agent);
    return htmlResponse(200, ldapLoginPage(flow.page, { idpName: provider.provider.name, username, error }));
  }

  async function ldapLogin(flow: F, form: Form): Promise<Response> {
    const provider = ldapProviderOf(flow);
    if (!provider) return kit.show(flow, kit.t(flow, 'idp.notAllowed'));
    const username = (form.get('username') ?? '').trim().slice(0, 200);
    const password = (form.get('password') ?? '').slice(0, 1000);
    const key = `${provider.provider.id}\n${username.toLowerCase()}`;
    if (await ldapFailures.blockedFor(key)) return ldapPage(flow, kit.t(flow, 'ldap.tooMany'), username);
    const outcome = await ldapSignIn(ctx.idps, provider.provider, username, password, publicOnly(provider));
    if (outcome.result === 'wrong') {
      recordSignInFailure('idp');
      await ldapFailures.fail(key);
      return ldapPage(flow, kit.t(flow, 'password.invalid'), username);
    }
    if (outcome.result === 'unavailable') {
      log.warn('LDAP provider unavailable', { idpId: provider.provider.id, reason: outcome.reason });
      return ldapPage(flow, kit.t(flow, 'idp.unavailable', { idp: provider.provider.name }), username);
    }
    return signInWith(flow, provider, outcome.identity);
  }

  const routes: Route[] = [
    kit.route('/ui/login/ldap', { POST: kit.atStep('ldap', (flow, form) => ldapLogin(flow, form)) }),
    kit.route('/ui/login/idp', {
      POST: kit.post((flow, form) => startAt(flow, (form.get('idpId') ?? '').slice(0, 200))),
    }),
    kit.route(CALLBACK_PATH, { GET: callback }),
    kit.route('/ui/login/external/register', {
      POST: kit.atStep('external', async (flow, form) => {
        const { identity, provider } = externalOf(flow);
        if (!identity || !provider?.provider.options.isCreationAllowed) return choicePage(flow);
        const values: RegisterValues = {
          firstName: (form.get('firstName') ?? '').trim().slice(0, 200),
          lastName: (form.get('lastName') ?? '').trim().slice(0, 200),
          userName: (form.get('userName') ?? '').trim().slice(0, 200),
          email: identity.email,
        };
        if (!values.firstName || !values.lastName || !values.userName) return choicePage(flow, kit.t(flow, 'register.missing'), values);
        if (termsToAccept(flow.page) && form.get('acceptTerms') !== 'yes') return choicePage(flow, kit.t(flow, 'register.termsNotAccepted'), values);
        const created = await create(flow, provider, identity, values);
        return 'error' in created ? choicePage(flow, created.detail ? `${kit.t(flow, created.error)} ${created.detail}` : kit.t(flow, created.error), values) : created.response;
      }),
    }),
    kit.route('/ui/login/external/link', {
      POST: kit.atStep('external', async (flow) => {
        const { identity, provider } = externalOf(flow);
        if (!identity || !provider?.provider.options.isLinkingAllowed) return choicePage(flow);
        // The account is linked once the person has signed in to theirs (all its steps): see linkChosen.
        await ctx.authRequests.enterStep(flow.auth, 'loginname');
        return kit.backToStep(flow);
      }),
    }),
  ];

  return { routes, buttons, hintedProvider, startAt, choicePage, linkChosen, ldapPage };
}

export type Federation = ReturnType<typeof federation>;
