import type { WritePort } from '../../storage/transactions.ts';
import type { Clocked, Configured, OnDatabase, Store } from '../ports.ts';

/** What taking, recording and reconciling a donation touch. */
export type DonatePort = Store & Clocked & WritePort & OnDatabase & Configured<'payments' | 'publicUrl'>;
