import { createServer, type Server, type Socket } from 'node:net';

export interface ReceivedMail {
  from: string;
  to: string[];
  data: string;
}

/**
 * A small SMTP server (RFC 5321, no TLS, no auth) that accepts every message and keeps it: enough
 * for nodemailer to deliver to, so the SMTP path is tested against the protocol, not a stub.
 */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  private server?: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((socket) => this.converse(socket));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Resolves with the first message to `to` that arrives within the timeout. */
  async waitFor(to: string, timeoutMs = 5000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find((mail) => mail.to.includes(to));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no mail to ${to} arrived`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private converse(socket: Socket): void {
    let buffer = '';
    let mail: ReceivedMail = { from: '', to: [], data: '' };
    let inData = false;
    const reply = (line: string) => socket.write(`${line}\r\n`);
    reply('220 sink.test ESMTP');
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let end = buffer.indexOf('\r\n');
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            this.received.push(mail);
            mail = { from: '', to: [], data: '' };
            reply('250 queued');
          } else mail.data += `${line.startsWith('..') ? line.slice(1) : line}\n`;
        } else {
          const verb = line.slice(0, 4).toUpperCase();
          if (verb === 'EHLO' || verb === 'HELO') reply('250 sink.test');
          else if (verb === 'MAIL') {
            mail.from = /<([^>]*)>/.exec(line)?.[1] ?? '';
            reply('250 ok');
          } else if (verb === 'RCPT') {
            mail.to.push(/<([^>]*)>/.exec(line)?.[1] ?? '');
            reply('250 ok');
          } else if (verb === 'DATA') {
            inData = true;
            reply('354 go ahead');
          } else if (verb === 'QUIT') {
            reply('221 bye');
            socket.end();
          } else if (verb === 'RSET') {
            mail = { from: '', to: [], data: '' };
            reply('250 ok');
          } else reply('250 ok');
        }
        end = buffer.indexOf('\r\n');
      }
    });
    socket.on('error', () => {});
  }
}
