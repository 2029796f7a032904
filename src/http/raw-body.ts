import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The body as received, kept by the JSON parsers: a signed request's Content-Digest (RFC 9530)
     * is checked against these bytes, not against a re-serialization of the parsed value.
     */
    rawBody?: string;
  }
}

/** Declares `rawBody` on every request up front, so setting it does not change the object's shape. */
export function keepRawBodies(app: FastifyInstance): void {
  app.decorateRequest('rawBody', undefined);
}
