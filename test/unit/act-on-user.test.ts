import { describe, expect, it } from 'vitest';
import { missingToActOn, type UserAction } from '../../src/domain/permissions.js';
import type { MemberRecord } from '../../src/model/records.js';

/**
 * The one rule for acting on a user (src/domain/permissions.ts missingToActOn), as a table:
 * caller role × the target's memberships × action. The target is a user of org A; project P
 * belongs to org A. Each row lists the targets the caller may act on; every other cell is refused.
 */
const member = (scope: string, roles: string[]): MemberRecord => ({ id: `${scope}|x`, scope, userId: 'x', roles, createdAt: 0, changedAt: 0, sequence: 1 });
const orgOfProject = (id: string) => (id === 'P' ? 'A' : undefined);

const TARGETS: Record<string, MemberRecord[]> = {
  plain: [],
  orgOwnerA: [member('org:A', ['ORG_OWNER'])],
  iamOwner: [member('instance', ['IAM_OWNER'])],
  projectOwnerP: [member('project:P', ['PROJECT_OWNER'])],
  orgOwnerB: [member('org:B', ['ORG_OWNER'])],
  impersonatorA: [member('org:A', ['ORG_ADMIN_IMPERSONATOR'])],
};
const ALL = Object.keys(TARGETS);
const ADMINISTERED_IN_A = ['plain', 'orgOwnerA', 'projectOwnerP', 'impersonatorA'];

const CALLERS: Record<string, { memberships: MemberRecord[]; may: Partial<Record<UserAction, string[]>> }> = {
  IAM_OWNER: { memberships: [member('instance', ['IAM_OWNER'])], may: { 'user.write': ALL, 'user.delete': ALL, 'user.grant.write': ALL, impersonation: ALL } },
  IAM_USER_MANAGER: { memberships: [member('instance', ['IAM_USER_MANAGER'])], may: { 'user.write': ['plain'], 'user.delete': ['plain'], 'user.grant.write': ['plain'] } },
  IAM_ORG_MANAGER: {
    memberships: [member('instance', ['IAM_ORG_MANAGER'])],
    may: { 'user.write': ALL.filter((t) => t !== 'iamOwner'), 'user.delete': ALL.filter((t) => t !== 'iamOwner'), 'user.grant.write': ALL.filter((t) => t !== 'iamOwner') },
  },
  ORG_OWNER_A: { memberships: [member('org:A', ['ORG_OWNER'])], may: { 'user.write': ADMINISTERED_IN_A, 'user.delete': ADMINISTERED_IN_A, 'user.grant.write': ADMINISTERED_IN_A } },
  ORG_USER_MANAGER_A: { memberships: [member('org:A', ['ORG_USER_MANAGER'])], may: { 'user.write': ['plain'], 'user.delete': ['plain'], 'user.grant.write': ['plain'] } },
  ORG_OWNER_B: { memberships: [member('org:B', ['ORG_OWNER'])], may: {} },
  PROJECT_OWNER_P: { memberships: [member('project:P', ['PROJECT_OWNER'])], may: {} },
  ORG_ADMIN_IMPERSONATOR_A: { memberships: [member('org:A', ['ORG_ADMIN_IMPERSONATOR'])], may: { impersonation: ADMINISTERED_IN_A } },
  ORG_END_USER_IMPERSONATOR_A: { memberships: [member('org:A', ['ORG_END_USER_IMPERSONATOR'])], may: { impersonation: ['plain'] } },
  IAM_ADMIN_IMPERSONATOR: { memberships: [member('instance', ['IAM_ADMIN_IMPERSONATOR'])], may: { impersonation: ALL } },
  IAM_END_USER_IMPERSONATOR: { memberships: [member('instance', ['IAM_END_USER_IMPERSONATOR'])], may: { impersonation: ['plain'] } },
  // Owning org A and impersonating there does not reach an instance owner of org A.
  ORG_OWNER_AND_ADMIN_IMPERSONATOR_A: {
    memberships: [member('org:A', ['ORG_OWNER', 'ORG_ADMIN_IMPERSONATOR'])],
    may: { 'user.write': ADMINISTERED_IN_A, 'user.delete': ADMINISTERED_IN_A, 'user.grant.write': ADMINISTERED_IN_A, impersonation: ADMINISTERED_IN_A },
  },
};
const ACTIONS: UserAction[] = ['user.write', 'user.delete', 'user.grant.write', 'impersonation'];

describe('acting on a user needs a right of every scope the user administers', () => {
  const cells = Object.entries(CALLERS).flatMap(([caller, c]) =>
    ACTIONS.flatMap((action) => Object.keys(TARGETS).map((target) => ({ caller, action, target, allowed: (c.may[action] ?? []).includes(target) }))),
  );
  it.each(cells)('$caller $action on $target: allowed=$allowed', ({ caller, action, target, allowed }) => {
    const missing = missingToActOn(CALLERS[caller]!.memberships, action, { orgId: 'A', memberships: TARGETS[target]! }, orgOfProject);
    expect(missing === undefined).toBe(allowed);
  });

  it('names what is missing', () => {
    expect(missingToActOn(CALLERS.ORG_OWNER_A!.memberships, 'user.write', { orgId: 'A', memberships: TARGETS.iamOwner! }, orgOfProject)).toBe(
      'iam.member.write on instance (the user holds roles there)',
    );
    expect(missingToActOn(CALLERS.ORG_USER_MANAGER_A!.memberships, 'user.write', { orgId: 'B', memberships: [] }, orgOfProject)).toBe('user.write');
    expect(missingToActOn(CALLERS.ORG_END_USER_IMPERSONATOR_A!.memberships, 'impersonation', { orgId: 'A', memberships: TARGETS.orgOwnerA! }, orgOfProject)).toBe('impersonation.admin');
  });
});
