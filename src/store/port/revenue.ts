/**
 * The revenue part of the storage port (see ../port.ts). Methods are synchronous and shaped for
 * bulk work: a single call is a chunk of one.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface RevenueRepository {}
