import { describe, expect, it } from 'vitest';
import { sessionIndexEntries, UserSessionsActor, type UserSession } from '../../src/actors/user-sessions.js';
import { buildIndexOnce } from '../../src/storage/index-once.js';
import { tempStorageEach } from '../helpers/temp-storage.js';

/** A data dir from before the session index: the first start builds it, so browsers find their sessions. */
const storage = tempStorageEach('index-once');

describe('indexes built once', () => {
  it('sessions stored without the index are found by browser and by user after a start', async () => {
    const now = Date.now();
    const session: UserSession = { id: 'V1_1', agentId: 'agent-a', userId: 'u1', authTime: 1, amr: ['pwd'], createdAt: now, lastActiveAt: now };
    await storage().stores.userSessions.put(session.id, session);
    expect(storage().stores.sessionIndex.getKeysCount()).toBe(0);
    // What a start does (src/app.ts) before any thread serves.
    buildIndexOnce(storage().stores.userSessions, storage().stores.sessionIndex, sessionIndexEntries);
    const sessions = new UserSessionsActor(storage().records, 3_600_000);
    expect((await sessions.ofAgent('agent-a')).map((s) => s.id)).toEqual(['V1_1']);
    expect((await sessions.ofUser('u1')).map((s) => s.id)).toEqual(['V1_1']);
  });
});
