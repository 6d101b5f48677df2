import { describe, expect, it } from 'vitest';
import { createMetricsMemory } from '../../src/observability/metrics-memory.js';
import { installRecorder, metricsGlance, recordIntrospection, recordLockout, recordMail, recordSignIn, recordSignInFailure, recordTokenIssued } from '../../src/observability/recorder.js';

/** The console's figures at a glance: every thread's counts added up, nothing with metrics off. */
describe('metricsGlance', () => {
  it('adds up what each HTTP thread counted, and is undefined with metrics off', () => {
    expect(metricsGlance()).toBeUndefined();
    const memory = createMetricsMemory(2);
    // Thread 1 counts a sign-in and a token; thread 0 the rest.
    const second = installRecorder(memory, 1);
    recordSignIn();
    recordTokenIssued('authorization_code', 'opaque_access_token');
    second();
    const first = installRecorder(memory, 0);
    try {
      recordSignIn();
      recordSignInFailure('password');
      recordLockout('password');
      recordTokenIssued('client_credentials', 'jwt_access_token');
      recordTokenIssued('refresh_token', 'refresh_token');
      recordIntrospection(true);
      // A mail queued, then sent: one sent.
      recordMail('queued');
      recordMail('sent');
      expect(metricsGlance()).toEqual({ tokensIssued: 3, introspections: 1, signIns: 2, signInFailures: 1, lockouts: 1, mails: 1 });
    } finally {
      first();
    }
    expect(metricsGlance()).toBeUndefined();
  });
});
