import nodemailer from 'nodemailer';
import type { Config } from '../../config.ts';

export interface OutboxMessage {
  to: string;
  subject: string;
  text: string;
  at: number;
}

export interface Mailer {
  send(message: OutboxMessage): Promise<void>;
  /** The dev outbox: present only when no SMTP server is configured. */
  outbox?: OutboxMessage[];
}

const OUTBOX_SIZE = 50;

/**
 * SMTP through nodemailer when SMTP_URL is set; otherwise a dev outbox held in memory (the embedded
 * single-process mode), so `npm start` can sign people in with no mail server.
 */
export function createMailer(config: Config, log: (line: string) => void): Mailer {
  if (config.smtpUrl) {
    const transport = nodemailer.createTransport(config.smtpUrl);
    return {
      send: async (message) => {
        await transport.sendMail({
          from: config.mailFrom,
          to: message.to,
          subject: message.subject,
          text: message.text,
        });
      },
    };
  }
  const outbox: OutboxMessage[] = [];
  return {
    outbox,
    send: async (message) => {
      outbox.unshift(message);
      outbox.length = Math.min(outbox.length, OUTBOX_SIZE);
      log(`dev outbox: sign-in mail for ${message.to} is at ${config.publicUrl}/dev/outbox`);
    },
  };
}
