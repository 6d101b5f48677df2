import { agentIdOf, newAgentCookie } from '../../actors/user-sessions.js';
import type { FlowView } from '../../services/ports.js';
import { agentCookiePolicy, parseCookies, setCookieHeader } from '../cookies.js';
import type { Request } from '../types.js';
import { chooseLocale, type Locale } from '../../ui/i18n.js';

/** What this module uses of the wired parts (src/app.ts). */
export type AgentPorts = Pick<FlowView, 'issuer'>;

/** The user agent behind a browser request: its cookie (if any), agent id and language. */
export interface Agent {
  cookie: string | undefined;
  agentId: string | undefined;
  locale: Locale;
}

export function agentOf(ctx: AgentPorts, req: Request, uiLocales?: string): Agent {
  const cookie = parseCookies(req.headers.cookie).get(agentCookiePolicy(ctx.issuer).name);
  const valid = cookie !== undefined && /^[A-Za-z0-9_-]{43}$/.test(cookie) ? cookie : undefined;
  return { cookie: valid, agentId: valid ? agentIdOf(valid) : undefined, locale: chooseLocale(uiLocales, req.headers['accept-language']) };
}

/** The agent's cookie, creating one (with its Set-Cookie header) when the browser has none yet. */
export function ensureAgentCookie(ctx: AgentPorts, agent: Agent): { cookie: string; agentId: string; headers: Record<string, string> } {
  if (agent.cookie && agent.agentId) return { cookie: agent.cookie, agentId: agent.agentId, headers: {} };
  return newAgentCookieFor(ctx);
}

/** A new cookie for the browser, replacing whatever it had (at every sign-in: session fixation). */
export function newAgentCookieFor(ctx: AgentPorts): { cookie: string; agentId: string; headers: Record<string, string> } {
  const cookie = newAgentCookie();
  return { cookie, agentId: agentIdOf(cookie), headers: { 'Set-Cookie': setCookieHeader(agentCookiePolicy(ctx.issuer), cookie) } };
}
