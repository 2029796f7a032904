import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ApiError, apiError } from '../core/errors.ts';

/** What node:http reports before a request reaches the app, each as an answer in the Error shape. */
function failureOf(error: NodeJS.ErrnoException): ApiError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return apiError('request_timeout');
  if (error.code === 'HPE_HEADER_OVERFLOW') return apiError('headers_too_large');
  return apiError('bad_request', { message: 'The request is not valid HTTP/1.1.' });
}

/**
 * Fastify's clientErrorHandler: a request cut off or unreadable before routing gets the same Error
 * body as every other refusal (Fastify's own default writes a body of another shape), then the
 * connection is closed, as node:http does.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const failure = failureOf(error);
    const status = failure.status;
    const body = JSON.stringify(failure.body());
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
