import { codeFlow, refresh } from './browser-flows.js';
import { ccJwtScenarios, ccOpaque } from './client-credentials.js';
import { discovery } from './discovery.js';
import { ccDpop } from './dpop.js';
import { introspectJwt, introspectOpaque } from './introspect.js';
import { jwks } from './jwks.js';
import { jwtBearer } from './jwt-bearer.js';
import { migrate } from './migrate.js';
import { revoke } from './revoke.js';
import { tokenExchange } from './token-exchange.js';
import type { Scenario } from './scenario.js';

/** Every scenario, in run order. A new scenario is one module added here. */
export const SCENARIOS: Scenario[] = [discovery, jwks, ccOpaque, ...ccJwtScenarios, ccDpop, introspectOpaque, introspectJwt, revoke, jwtBearer, tokenExchange, codeFlow, refresh];

/** Scenarios that run only when named (`--scenarios migrate`): long, and not request throughput. */
export const OPT_IN_SCENARIOS: Scenario[] = [migrate];

/** Selects scenarios by exact name or prefix (`cc-jwt` selects all three algorithms). */
export function selectScenarios(names: readonly string[] | undefined, all: readonly Scenario[] = SCENARIOS, optIn: readonly Scenario[] = OPT_IN_SCENARIOS): Scenario[] {
  if (!names) return [...all];
  const known = [...all, ...optIn];
  const picked = known.filter((s) => names.some((n) => s.name === n || s.name.startsWith(`${n}-`)));
  const unknown = names.filter((n) => !known.some((s) => s.name === n || s.name.startsWith(`${n}-`)));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; known: ${known.map((s) => s.name).join(', ')}`);
  return picked;
}
