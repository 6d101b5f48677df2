import { parentPort, workerData } from 'node:worker_threads';
import { runAutocannonRaw, type ShardData, type ShardMessage } from './load.js';
import { selectScenarios } from './scenarios/index.js';

/**
 * One load thread of `--load-threads n` (see load.ts): prepares its own plan of the scenario
 * against the target, says it is ready, and on the bench's word sends it with its share of the
 * connections and the rate.
 */
const { scenario: name, origin, target, options } = workerData as ShardData;
const post = (message: ShardMessage) => parentPort!.postMessage(message);

try {
  const scenario = selectScenarios([name])[0];
  if (!scenario || !('plan' in scenario)) throw new Error(`no request scenario ${name}`);
  const plan = await scenario.plan(target, options);
  if ('skip' in plan) post({ type: 'skip', reason: plan.skip });
  else {
    // Prepared: every thread starts when the bench says so, together.
    post({ type: 'ready' });
    await new Promise((resolve) => parentPort!.once('message', resolve));
    post({ type: 'done', raw: await runAutocannonRaw(origin, plan, options) });
  }
} catch (error) {
  post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
}
