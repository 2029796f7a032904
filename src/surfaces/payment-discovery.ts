import type { FastifyInstance } from 'fastify';
import { toApiError } from '../core/errors.ts';
import { facilitatorRefusal } from '../domain/payments/facilitator-refusal.ts';
import type { Deps } from '../operations/services.ts';

/**
 * `GET /discovery/resources` (reference §9): the payable resources in x402's discovery shape, for
 * agents and catalogs that look for x402 services. Empty while payments are not configured.
 */
export function registerPaymentDiscovery(app: FastifyInstance, deps: Deps): void {
  app.get('/discovery/resources', async (request, reply) => {
    try {
      // Without a payee there is nothing to list, and the x402 code is not loaded (domain/payments/terms.ts).
      const items = deps.config.payments.payTo
        ? await (await import('../domain/payments/x402.ts')).payableResources(
            deps.config.payments,
            deps.config.publicUrl,
            deps.clock.now(),
          )
        : [];
      return { x402Version: 2, items, pagination: { limit: items.length, offset: 0, total: items.length } };
    } catch (error) {
      // Only a listing that loaded the x402 code can fail, so this import is the loaded module's.
      const { FacilitatorUnusable: Unusable } = await import('../domain/payments/facilitator.ts');
      const apiError =
        error instanceof Unusable
          ? facilitatorRefusal(error.failure, 'the requirements cannot be listed now.')
          : toApiError(error);
      if (apiError.status >= 500 && !(error instanceof Unusable))
        request.log.error({ err: error }, 'discovery failed');
      return reply.code(apiError.status).headers(apiError.headers()).send(apiError.body(request.id));
    }
  });
}
