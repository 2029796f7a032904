import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Transporter } from 'nodemailer';
import { type Config, isLoopback } from '../../config.ts';
import { StartRefused } from '../../core/errors.ts';
import { devOutbox } from '../../storage/dev-outbox.ts';
import type { Executor } from '../../storage/schema.ts';

export interface OutboxMessage {
  to: string;
  subject: string;
  text: string;
  at: number;
}

/**
 * How sign-in links reach people, decided once from the configuration:
 * - `smtp`: mailed through SMTP_URL;
 * - `dev-outbox`: kept in memory for a local development server (host and public URL on loopback),
 *   readable only with a key printed on the server's terminal at start;
 * - `oidc-only`: a public deployment with single sign-on and no mail server: email links are off.
 * A public deployment with neither cannot deliver links and refuses to start (SignInUndeliverable).
 */
export type SignInDelivery = 'smtp' | 'dev-outbox' | 'oidc-only';

export interface Mailer {
  delivery: SignInDelivery;
  send(message: OutboxMessage): Promise<void>;
  /** The dev outbox (newest first) and the key that opens it: present only for `dev-outbox`. */
  outbox?: { messages: OutboxMessage[]; key: string; opens(key: unknown): boolean };
}

export class SignInUndeliverable extends StartRefused {}

const OUTBOX_SIZE = 50;

/**
 * The development outbox's key: made once per database and kept in it, so a restart prints the same
 * address and `agent-commons outbox` can print it again. Whoever can read the database could open the
 * outbox; on a local server that is the same person.
 */
export async function devOutboxKey(db: Executor): Promise<string> {
  return devOutbox.keepKey(db, randomBytes(18).toString('base64url'));
}

/** The address of the development outbox (the key opens it). */
export function devOutboxUrl(config: Config, key: string): string {
  return `${config.publicUrl}/dev/outbox?key=${key}`;
}
/** Served and addressed on this machine only: nobody else can reach the server or its links. */
export function isLocalDeployment(config: Config): boolean {
  return isLoopback(config.host) && isLoopback(new URL(config.publicUrl).hostname);
}

export function signInDelivery(config: Config): SignInDelivery {
  if (config.smtpUrl) return 'smtp';
  if (isLocalDeployment(config)) return 'dev-outbox';
  if (config.oidc) return 'oidc-only';
  throw new SignInUndeliverable(
    `sign-in links cannot be delivered: ${config.publicUrl} is not a local address and neither SMTP_URL ` +
      '(mail) nor OIDC_ISSUER and OIDC_CLIENT_ID (single sign-on) is set. Set one of them; the development ' +
      'outbox is only offered when HOST and PUBLIC_URL are loopback addresses.',
  );
}

/** The mailer; `outboxKey` is the development outbox's key (devOutboxKey), random when not given. */
export function createMailer(config: Config, outboxKey?: string): Mailer {
  const delivery = signInDelivery(config);
  if (delivery === 'smtp') {
    // nodemailer is loaded by the first mail (an instance without SMTP never loads it).
    let transport: Promise<Transporter> | undefined;
    return {
      delivery,
      send: async (message) => {
        transport ??= import('nodemailer').then((nodemailer) =>
          nodemailer.default.createTransport(config.smtpUrl!),
        );
        await (await transport).sendMail({
          from: config.mailFrom,
          to: message.to,
          subject: message.subject,
          text: message.text,
        });
      },
    };
  }
  if (delivery === 'oidc-only') {
    return {
      delivery,
      send: async () => {
        throw new Error('email sign-in is off: no SMTP_URL is set');
      },
    };
  }
  const messages: OutboxMessage[] = [];
  const key = outboxKey ?? randomBytes(18).toString('base64url');
  const expected = Buffer.from(key);
  return {
    delivery,
    outbox: {
      messages,
      key,
      opens: (given) =>
        typeof given === 'string' &&
        given.length === key.length &&
        timingSafeEqual(Buffer.from(given), expected),
    },
    send: async (message) => {
      messages.unshift(message);
      messages.length = Math.min(messages.length, OUTBOX_SIZE);
    },
  };
}

/** The one line the server prints at start about sign-in. */
export function describeSignIn(config: Config, mailer: Mailer): string {
  const production = 'for production set SMTP_URL (mail) or OIDC_ISSUER and OIDC_CLIENT_ID (single sign-on)';
  switch (mailer.delivery) {
    case 'smtp':
      return `sign-in: links are mailed through SMTP_URL${config.oidc ? ', and single sign-on through OIDC_ISSUER' : ''}`;
    case 'oidc-only':
      return 'sign-in: single sign-on through OIDC_ISSUER only; email links are off until SMTP_URL is set';
    case 'dev-outbox':
      return `sign-in: no mail server, so links wait in the development outbox, readable on this machine at ${devOutboxUrl(config, mailer.outbox!.key)}; \`agent-commons outbox\` prints it again (${production})`;
  }
}
