import { describe, expect, it } from 'vitest';
import { FailureLimiter } from '../../src/util/failure-limiter.js';

describe('FailureLimiter', () => {
  it('blocks after max failures in the window, until enough of them leave it; bounded in keys', () => {
    const limiter = new FailureLimiter(3, 1000, 2);
    limiter.fail('a', 0);
    limiter.fail('a', 100);
    expect(limiter.blockedFor('a', 100)).toBe(0);
    limiter.fail('a', 200);
    expect(limiter.blockedFor('a', 200)).toBe(800);
    expect(limiter.blockedFor('a', 999)).toBe(1);
    expect(limiter.blockedFor('a', 1000)).toBe(0);
    limiter.fail('b', 1000);
    limiter.fail('c', 1000);
    // 'a' was the least recently failing key: dropped when a third key came.
    expect(limiter.blockedFor('a', 1000)).toBe(0);
  });
});
