import { actingFor, type ActsFor } from './acting-for.js';
import type { Editor } from '../model/activity.js';
import { decidedAgain } from './decided-again.js';
import { notFound, preconditionFailed } from '../model/errors.js';
import type { Meta } from '../model/records.js';
import type { MetaStore } from '../storage/meta.js';
import type { MasterKey } from '../crypto/master-key.js';
import { newId } from '../util/ids.js';
import { clock } from '../util/clock.js';
import type { View } from '../util/readonly.js';

/**
 * The instance's SMTP configurations (ZITADEL admin v1 `…/smtp`): several may be stored, at most
 * one is active, and mail goes out through that one. The password is sealed with the master key
 * (it must be sent to the relay, so it cannot be a digest) and never read back through the API.
 * The list is one instance-wide record of the `meta` store, so every thread and node sees the same.
 */
export type SmtpConfigState = 'SMTP_CONFIG_ACTIVE' | 'SMTP_CONFIG_INACTIVE';

export interface SmtpConfig extends Meta {
  id: string;
  description: string;
  senderAddress: string;
  senderName: string;
  replyToAddress: string;
  /** `host:port` of the relay. */
  host: string;
  /** Empty: the relay takes mail without credentials. */
  user: string;
  passwordSealed?: Uint8Array;
  /** TLS to the relay: implicit TLS, else STARTTLS required; false: plain SMTP. */
  tls: boolean;
  state: SmtpConfigState;
}

export type SmtpSettings = Pick<SmtpConfig, 'description' | 'senderAddress' | 'senderName' | 'replyToAddress' | 'host' | 'user' | 'tls'>;

interface SmtpConfigList extends Meta {
  configs: SmtpConfig[];
}

const RECORD = 'smtpConfigs';
const EMPTY: View<SmtpConfigList> = { configs: [], createdAt: 0, changedAt: 0, sequence: 0 };

export class SmtpConfigsActor implements ActsFor {
  /** Who this actor's changes are by (see by); Sesame itself on the actor as composed. */
  readonly editor: Editor | undefined = undefined;

  /** This actor acting for `editor`: its changes are `editor`'s in the activity log. */
  by(editor: Editor): this {
    return actingFor(this, editor);
  }

  constructor(
    private readonly meta: MetaStore,
    private readonly masterKey: MasterKey,
  ) {}

  private get list(): View<SmtpConfigList> {
    return this.meta.record<SmtpConfigList>(RECORD) ?? EMPTY;
  }

  all(): readonly View<SmtpConfig>[] {
    return this.list.configs;
  }

  get(id: string): View<SmtpConfig> {
    const config = this.list.configs.find((c) => c.id === id);
    if (!config) throw notFound('SMTP-7nmci', `SMTP configuration ${id} not found (Errors.SMTPConfig.NotFound)`);
    return config;
  }

  /** The configuration mail goes out through, if one is active. */
  active(): View<SmtpConfig> | undefined {
    return this.list.configs.find((c) => c.state === 'SMTP_CONFIG_ACTIVE');
  }

  /** The relay's password in clear, to log in with (undefined: none stored). */
  password(config: View<SmtpConfig>): string | undefined {
    return config.passwordSealed ? this.masterKey.decrypt(config.passwordSealed).toString('utf8') : undefined;
  }

  add(settings: SmtpSettings, password: string): Promise<View<SmtpConfig>> {
    const now = clock.now();
    const config: SmtpConfig = {
      id: newId(),
      ...settings,
      ...(password ? { passwordSealed: this.masterKey.encrypt(Buffer.from(password, 'utf8')) } : {}),
      state: 'SMTP_CONFIG_INACTIVE',
      createdAt: now,
      changedAt: now,
      sequence: 1,
    };
    return this.change((configs) => [...configs, config]).then(() => config);
  }

  /** Changes the settings; `password` (when given) replaces the stored one, an empty one removes it. */
  update(id: string, settings: SmtpSettings, password?: string): Promise<View<SmtpConfig>> {
    return this.changeOne(id, (c) => {
      const next: SmtpConfig = { ...c, ...settings };
      if (password !== undefined) {
        delete next.passwordSealed;
        if (password) next.passwordSealed = this.masterKey.encrypt(Buffer.from(password, 'utf8'));
      }
      return next;
    });
  }

  /** Makes this the active configuration; the one active before is deactivated (ZITADEL's rule). */
  activate(id: string): Promise<View<SmtpConfig>> {
    this.get(id);
    const now = clock.now();
    return this.change((configs) =>
      configs.map((c) => {
        if (c.id === id) return c.state === 'SMTP_CONFIG_ACTIVE' ? c : { ...c, state: 'SMTP_CONFIG_ACTIVE' as const, changedAt: now, sequence: c.sequence + 1 };
        return c.state === 'SMTP_CONFIG_ACTIVE' ? { ...c, state: 'SMTP_CONFIG_INACTIVE' as const, changedAt: now, sequence: c.sequence + 1 } : c;
      }),
    ).then(() => this.get(id));
  }

  deactivate(id: string): Promise<View<SmtpConfig>> {
    return this.changeOne(id, (c) => {
      if (c.state !== 'SMTP_CONFIG_ACTIVE') throw preconditionFailed('SMTP-km8g3', 'the SMTP configuration is not active (Errors.SMTPConfig.NotActive)');
      return { ...c, state: 'SMTP_CONFIG_INACTIVE' };
    });
  }

  remove(id: string): Promise<void> {
    this.get(id);
    return this.change((configs) => configs.filter((c) => c.id !== id)).then(() => undefined);
  }

  private changeOne(id: string, change: (config: SmtpConfig) => SmtpConfig): Promise<View<SmtpConfig>> {
    this.get(id);
    return this.change((configs) =>
      configs.map((c) => {
        if (c.id !== id) return c;
        return { ...change(c as SmtpConfig), changedAt: clock.now(), sequence: c.sequence + 1 };
      }),
    ).then(() => this.get(id));
  }

  /** One change of the list as stored; decided again on the stored list when another thread changed it first. */
  private change(next: (configs: readonly View<SmtpConfig>[]) => readonly View<SmtpConfig>[]): Promise<void> {
    return decidedAgain({ fetch: () => this.meta.reread() }, { takeChange: () => (this.meta.reload(), true) }, async () => {
      const list = this.list;
      const now = clock.now();
      await this.meta.setRecord<SmtpConfigList>(RECORD, { configs: next(list.configs) as SmtpConfig[], createdAt: list.createdAt || now, changedAt: now, sequence: list.sequence + 1 }, this.editor);
    });
  }
}
