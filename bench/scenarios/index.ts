import { codeFlow, refresh } from './browser-flows.js';
import { ccJwtScenarios, ccOpaque } from './client-credentials.js';
import { discovery } from './discovery.js';
import { introspectJwt, introspectOpaque } from './introspect.js';
import { jwks } from './jwks.js';
import { jwtBearer } from './jwt-bearer.js';
import { revoke } from './revoke.js';
import type { Scenario } from './scenario.js';

/** Every scenario, in run order. A new scenario is one module added here. */
export const SCENARIOS: Scenario[] = [discovery, jwks, ccOpaque, ...ccJwtScenarios, introspectOpaque, introspectJwt, revoke, jwtBearer, codeFlow, refresh];

/** Selects scenarios by exact name or prefix (`cc-jwt` selects all three algorithms). */
export function selectScenarios(names: readonly string[] | undefined, all: readonly Scenario[] = SCENARIOS): Scenario[] {
  if (!names) return [...all];
  const picked = all.filter((s) => names.some((n) => s.name === n || s.name.startsWith(`${n}-`)));
  const unknown = names.filter((n) => !all.some((s) => s.name === n || s.name.startsWith(`${n}-`)));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; known: ${all.map((s) => s.name).join(', ')}`);
  return picked;
}
