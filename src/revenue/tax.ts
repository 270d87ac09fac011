import {fromMinor, mulDivHalfUp} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import {taxAboveAmount} from '../schemas/revenue.js'

/**
 * Revenue net of tax (docs/revenue.md, "Tax"). A charge's `amount` is what the customer paid
 * (gross) and its `tax` the part of it that was tax, both in exact minor units of its
 * currency, so its net is `amount - tax` to the minor unit. Every USD figure splits the same
 * way: the tax's share of a USD amount is `usd x tax / amount`, rounded half up to the cent
 * once, and the net is the rest, so net + tax = gross in USD too, whatever the rounding.
 * A refund returns tax in proportion to what it returns (a full refund all of it).
 */

/** The tax's share of a USD figure of the amount (cents): usd x tax / amount, half up; 0 without tax or amount. */
export function taxShare(usdMinor: number, taxMinor: number, amountMinor: number): number {
  if (taxMinor <= 0 || amountMinor <= 0) return 0
  if (taxMinor >= amountMinor) return usdMinor
  return mulDivHalfUp(usdMinor, BigInt(taxMinor), BigInt(amountMinor), 'tax')
}

/** The USD columns of a charge's tax: its share of the USD amount and of the USD refund. */
export function chargeTaxUsd(amountMinor: null | number, taxMinor: number, amountUsdMinor: null | number, refundedUsdMinor: number): {tax_refunded_usd_minor: number; tax_usd_minor: number} {
  if (amountMinor === null || amountUsdMinor === null) return {tax_refunded_usd_minor: 0, tax_usd_minor: 0}
  return {tax_refunded_usd_minor: taxShare(refundedUsdMinor, taxMinor, amountMinor), tax_usd_minor: taxShare(amountUsdMinor, taxMinor, amountMinor)}
}

/**
 * What a subscription adds to MRR (USD cents a month): its month-normalised USD amount net of
 * its tax share. Null for one-time products (no monthly figure).
 */
export function netMonthly(monthlyUsdMinor: null | number, taxMinor: number, amountMinor: null | number): null | number {
  if (monthlyUsdMinor === null) return null
  return monthlyUsdMinor - taxShare(monthlyUsdMinor, taxMinor, amountMinor ?? 0)
}

/** Why a tax cannot stand beside its amount, or undefined: never negative, never more than the amount it is part of. */
export function taxProblem(taxMinor: number, amountMinor: null | number): string | undefined {
  if (taxMinor < 0) return 'is negative'
  if (amountMinor !== null && taxMinor > amountMinor) return 'is more than the amount it is part of'
  return undefined
}

/**
 * The tax an update leaves beside the amount: refused (exit 2, naming the field the update
 * gave) when it is more than the amount it is part of (the amount alone lowered below the
 * stored tax, or the tax alone raised above the stored amount).
 */
export function checkTax(kind: 'charge' | 'subscription', taxMinor: number, amountMinor: null | number, currency: string, field: 'amount' | 'tax'): void {
  if (taxProblem(taxMinor, amountMinor) === undefined) return
  const tax = fromMinor(taxMinor, currency)
  const amount = fromMinor(amountMinor ?? 0, currency)
  throw new InvalidInputError(
    field === 'tax'
      ? `invalid ${kind} update: tax: ${taxAboveAmount(tax, amount)}`
      : `invalid ${kind} update: amount: ${amount} is less than the tax it includes (${tax}); give the tax with the amount (--tax)`,
  )
}
