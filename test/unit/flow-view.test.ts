import { describe, expect, it } from 'vitest';
import type { FlowView } from '../../src/services/ports.js';
import type { FlowPorts } from '../../src/compose.js';

/**
 * The flows every HTTP thread serves see the directory read-only: a write through their ports is a
 * compile error (`npm run typecheck` fails if any line marked below compiles).
 */
function writesThroughFlowPorts(view: FlowView, flows: FlowPorts): unknown[] {
  return [
    // @ts-expect-error the directory's writer is not a flow's
    () => view.orgs.addUser('org', { userName: 'x', machine: { name: 'x', description: '', accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' } }),
    // @ts-expect-error nor is a lockout count: the login asks LoginDirectory
    () => view.orgs.recordPasswordFailure('user'),
    // @ts-expect-error nor an app's change
    () => flows.clients.removeApp('project', 'app'),
    // @ts-expect-error nor a key rotation
    () => flows.keys.rotate(),
    // Reads are the flows' own.
    () => view.orgs.getUser('user'),
    () => flows.clients.appByClient('client'),
  ];
}

describe('the flows’ view of the directory', () => {
  it('offers reads only (checked by the compiler)', () => {
    expect(writesThroughFlowPorts).toBeTypeOf('function');
  });
});
