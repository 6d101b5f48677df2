import type { OrgsActor } from '../actors/orgs.js';
import type { NewHuman } from '../actors/new-human.js';
import type { UserRecord } from '../model/records.js';
import type { LoginDirectory, PasswordCheck } from '../services/login-directory.js';
import type { View } from '../util/readonly.js';
import type { AskWriter } from './protocol.js';

/**
 * An acceptor thread's LoginDirectory: each decision is the main thread's (the directory has one
 * writer, see src/services/login-directory.ts), asked over this thread's port; the user it
 * answers with is taken into this thread's copy of the directory at once, so the login request
 * that asked goes on with what was written (a change other threads read brings a reload of
 * their copies; a quiet one, a failure count, does not, and only the writer reads it).
 */
export class RelayedLoginDirectory implements LoginDirectory {
  constructor(
    private readonly askWriter: AskWriter,
    private readonly orgs: OrgsActor,
  ) {}

  private ask(method: keyof LoginDirectory & string, args: unknown[]): Promise<unknown> {
    return this.askWriter('login', method, args);
  }

  private adopt<T extends View<UserRecord> | undefined>(user: T): T {
    if (user) this.orgs.adoptUser(user);
    return user;
  }

  async checkPassword(userId: string | undefined, password: string): Promise<PasswordCheck> {
    const check = (await this.ask('checkPassword', [userId, password])) as PasswordCheck;
    if (check.result !== 'notAllowed') this.adopt(check.user);
    return check;
  }

  async recordOtpFailure(userId: string, passedAt: number): Promise<{ locked: boolean; over: boolean; user: View<UserRecord> | undefined }> {
    const answer = (await this.ask('recordOtpFailure', [userId, passedAt])) as { locked: boolean; over: boolean; user: View<UserRecord> | undefined };
    this.adopt(answer.user);
    return answer;
  }

  async recordOtpSuccess(userId: string, passedAt: number): Promise<boolean> {
    return (await this.ask('recordOtpSuccess', [userId, passedAt])) as boolean;
  }

  async enrollOtp(userId: string, sealedSecret: Uint8Array, passedAt: number): Promise<View<UserRecord> | undefined> {
    return this.adopt((await this.ask('enrollOtp', [userId, sealedSecret, passedAt])) as View<UserRecord> | undefined);
  }

  async skipMfaInit(userId: string, at: number): Promise<View<UserRecord> | undefined> {
    return this.adopt((await this.ask('skipMfaInit', [userId, at])) as View<UserRecord> | undefined);
  }

  async changePassword(userId: string, password: string, passedAt: number): Promise<View<UserRecord> | undefined> {
    return this.adopt((await this.ask('changePassword', [userId, password, passedAt])) as View<UserRecord> | undefined);
  }

  async register(orgId: string, person: NewHuman, password: string): Promise<View<UserRecord>> {
    return this.adopt((await this.ask('register', [orgId, person, password])) as View<UserRecord>);
  }
}
