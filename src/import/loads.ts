import type {Several} from './products.js'

/**
 * What RowMapper.map needs from the store before it can map a row, and has not read yet:
 * the origin gateway's table overrides, one currency's FX rates, the products one cell
 * names, or the prices that tell several such products apart. map() never reads the store:
 * it returns the miss, its caller has RowMapper.load read it (one call, outside map) and
 * maps the row again. An export names a few products and currencies, so a handful of rows
 * miss and the others map without a read (src/import/rows.ts, "Loads").
 */
export type Need =
  | {currency: string; kind: 'fx'}
  | {interval?: string; intervalCount?: number; kind: 'product'; ref: string}
  | {kind: 'prices'; several: Several}
  | {kind: 'rules'}

/** A row map() could not finish without a read: what to load (RowMapper.load). Thrown inside the mapper, returned by map(). */
export class RowMiss {
  constructor(readonly need: Need) {}
}
