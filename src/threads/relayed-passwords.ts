import type { NewHuman } from '../actors/new-human.js';
import type { UserRecord } from '../model/records.js';
import type { LoginDirectory, PasswordWork } from '../services/login-directory.js';
import type { View } from '../util/readonly.js';
import type { AskWriter } from './protocol.js';

/**
 * An acceptor thread's password work: hashing and verifying run in the main thread's password
 * pool (one pool per process, sized to the cores), asked over this thread's port. Only the CPU
 * work goes there; what a check decides is decided here, in the store (LoginDecisions).
 */
export function relayedPasswords(ask: AskWriter): PasswordWork {
  return {
    hashPassword: async (password) => (await ask('passwords', 'hashPassword', [password])) as string,
    verifyPassword: async (password, hash) => (await ask('passwords', 'verifyPassword', [password, hash])) as Awaited<ReturnType<PasswordWork['verifyPassword']>>,
  };
}

/**
 * An acceptor thread's registrar for the login: a new person is added by the main thread, whose
 * copy of the directory is the one that knows every name taken (names are not unique in the store
 * itself yet).
 */
export function relayedRegistrar(ask: AskWriter): Pick<LoginDirectory, 'register'> {
  return {
    register: async (orgId: string, person: NewHuman, password: string) => (await ask('login', 'register', [orgId, person, password])) as View<UserRecord>,
  };
}
