import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorKind } from '../core/errors.ts';

interface ClientFailure {
  status: number;
  code: string;
  kind: ErrorKind;
  message: string;
}

/** What node:http reports before a request reaches the app, each as an answer in the Error shape. */
function failureOf(error: NodeJS.ErrnoException): ClientFailure {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return {
      status: 408,
      code: 'request_timeout',
      kind: 'timeout',
      message: 'The request did not arrive in full within the time the server allows; send it again.',
    };
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return {
      status: 431,
      code: 'headers_too_large',
      kind: 'payload_too_large',
      message: 'The request headers are larger than the server accepts.',
    };
  return {
    status: 400,
    code: 'bad_request',
    kind: 'validation',
    message: 'The request is not valid HTTP/1.1.',
  };
}

/**
 * Fastify's clientErrorHandler: a request cut off or unreadable before routing gets the same Error
 * body as every other refusal (Fastify's own default writes a body of another shape), then the
 * connection is closed, as node:http does.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const { status, code, kind, message } = failureOf(error);
    const body = JSON.stringify({ error: code, error_kind: kind, message });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
