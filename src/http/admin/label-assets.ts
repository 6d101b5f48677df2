import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { INSTANCE_POLICY, type LabelPolicy } from '../../model/records.js';
import { changedDetails, rfc3339 } from '../../zitadel/details.js';
import { invalidArgument, notFound } from '../../model/errors.js';
import { assetProblem, MAX_LABEL_ASSET_BYTES, type LabelAssetSlot } from '../../domain/label-asset.js';
import { apiRoute, ok } from './endpoint.js';
import { uploadedFile } from '../multipart.js';
import type { Caller, CallerPorts } from './caller.js';
import type { Request, Response } from '../types.js';
import { clock } from '../../util/clock.js';

/** What this module uses of the wired parts (src/app.ts). */
export type LabelAssetsPorts = Pick<Ports, 'orgs' | 'labelAssets'> & CallerPorts;

/**
 * The label policy's images and font (ZITADEL's assets API): uploaded to the policy being edited
 * (`POST /assets/v1/org/policy/label/logo`, `…/logo/dark`, `…/icon`, `…/icon/dark`, `…/font`; the
 * instance's under `/assets/v1/instance/…`), read back with GET, removed with
 * `DELETE /management/v1/policies/label/logo` (`logo_dark`, `icon`, `icon_dark`, `font`; the
 * instance's under `/admin/v1/…`), and in force with the rest of the policy once activated. The
 * file is a multipart `file` part or the body itself; its type is told by its bytes.
 */
const SLOTS: readonly { slot: LabelAssetSlot; upload: string; remove: string }[] = [
  { slot: 'logo', upload: 'logo', remove: 'logo' },
  { slot: 'logoDark', upload: 'logo/dark', remove: 'logo_dark' },
  { slot: 'icon', upload: 'icon', remove: 'icon' },
  { slot: 'iconDark', upload: 'icon/dark', remove: 'icon_dark' },
  { slot: 'font', upload: 'font', remove: 'font' },
];

export function labelAssetRoutes(ctx: LabelAssetsPorts): Route[] {
  const preview = (owner: string): LabelPolicy => ({ ...ctx.orgs.policy('labelPreview', owner).policy });
  const ownerOf = (scope: 'org' | 'instance', caller: Caller, write: boolean): string => {
    if (scope === 'instance') {
      caller.require(write ? 'iam.policy.write' : 'iam.policy.read', {});
      return INSTANCE_POLICY;
    }
    caller.require(write ? 'policy.write' : 'policy.read');
    ctx.orgs.requireOrg(caller.orgId);
    return caller.orgId;
  };
  const upload = (scope: 'org' | 'instance', slot: LabelAssetSlot) => async (req: Request, caller: Caller) => {
    const owner = ownerOf(scope, caller, true);
    const bytes = await uploadedFile(req, MAX_LABEL_ASSET_BYTES);
    const checked = assetProblem(slot, bytes);
    if ('problem' in checked) throw invalidArgument('ASSET-Typ30', `${slot}: ${checked.problem}`);
    const id = await ctx.labelAssets.put(bytes, checked.type);
    const record = await ctx.orgs.by(caller.by).setPolicy('labelPreview', owner, { ...preview(owner), [slot]: id }, 'either', true);
    return ok({ details: changedDetails(record, owner || undefined) });
  };
  const read =
    (scope: 'org' | 'instance', slot: LabelAssetSlot) =>
    async (_req: Request, caller: Caller): Promise<Response> => {
      const owner = ownerOf(scope, caller, false);
      const id = preview(owner)[slot];
      const asset = id ? await ctx.labelAssets.get(id) : undefined;
      if (!asset) throw notFound('ASSET-N0ne0', `the label policy has no ${slot}`);
      return { status: 200, headers: { 'Content-Type': asset.type, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' }, body: Buffer.from(asset.bytes) };
    };
  const remove = (scope: 'org' | 'instance', slot: LabelAssetSlot) => async (_req: Request, caller: Caller) => {
    const owner = ownerOf(scope, caller, true);
    const current = preview(owner);
    if (current[slot]) {
      delete current[slot];
      await ctx.orgs.by(caller.by).setPolicy('labelPreview', owner, current, 'either', true);
    }
    return ok({ details: { sequence: '0', changeDate: rfc3339(clock.now()), resourceOwner: owner || undefined } });
  };
  return SLOTS.flatMap(({ slot, upload: up, remove: rm }) => [
    apiRoute(ctx, `/assets/v1/org/policy/label/${up}`, { POST: upload('org', slot), GET: read('org', slot) }),
    apiRoute(ctx, `/assets/v1/instance/policy/label/${up}`, { POST: upload('instance', slot), GET: read('instance', slot) }),
    apiRoute(ctx, `/management/v1/policies/label/${rm}`, { DELETE: remove('org', slot) }),
    apiRoute(ctx, `/admin/v1/policies/label/${rm}`, { DELETE: remove('instance', slot) }),
  ]);
}
