/**
 * The bundled tax rates (docs/tax.md, "Bundled rates"): the standard VAT/GST rate of every
 * country that levies one on digital services sold to consumers, and the reduced rates some
 * countries apply to e-publications. Our own table rather than a package: the npm packages
 * that carry rates (`sales-tax` among them) lag behind rate changes by years and cannot be
 * dated. Rates are percent with at most two decimals (Cameroon's 19.25).
 *
 * Source: European Commission, "VAT rates applied in the Member States of the European
 * Union" (situation at 1 January 2025) for the EU; OECD, "Consumption Tax Trends 2024",
 * table "VAT/GST rates", checked against each tax authority's published rate for the rest.
 * As of 2025-01-01 (TAX_TABLE_AS_OF). A change after that date is an operator rate
 * (`pricectl tax set COUNTRY RATE --from DATE`) until this table is updated.
 *
 * The United States has no VAT: sales tax is set per state and city, so the table has no
 * US rate (0) and a seller who collects it sets one (`tax set US 8.875`). Canada's rate is
 * the federal GST (5%); provinces add PST or HST on top, set them with `tax set CA`.
 */

/** The day the bundled rates were last checked against their sources. */
export const TAX_TABLE_AS_OF = '2025-01-01'

/** What `tax list` names as the source of a bundled rate. */
export const TAX_TABLE_SOURCE = 'bundled (EC VAT rates 2025-01-01, OECD Consumption Tax Trends 2024)'

/** Standard rates in percent, by ISO 3166 country. */
export const STANDARD_RATES: Readonly<Record<string, number>> = {
  // European Union
  AT: 20, BE: 21, BG: 20, CY: 19, CZ: 21, DE: 19, DK: 25, EE: 22, ES: 21, FI: 25.5, FR: 20,
  GR: 24, HR: 25, HU: 27, IE: 23, IT: 22, LT: 21, LU: 17, LV: 21, MT: 18, NL: 21, PL: 23,
  PT: 23, RO: 19, SE: 25, SI: 22, SK: 23,
  // Rest of Europe
  AD: 4.5, AL: 20, AM: 20, AZ: 18, BA: 17, BY: 20, CH: 8.1, GB: 20, GE: 18, IS: 24, LI: 8.1,
  MC: 20, MD: 20, ME: 21, MK: 18, NO: 25, RS: 20, RU: 20, TR: 20, UA: 20,
  // Asia and Pacific
  AU: 10, BD: 15, CN: 13, ID: 12, IN: 18, JP: 10, KH: 10, KR: 10, KZ: 12, LA: 10, LK: 18,
  MN: 10, MY: 8, NP: 13, NZ: 15, PH: 12, PK: 18, SG: 9, TH: 7, TW: 5, UZ: 12, VN: 10,
  // Middle East and Africa
  AE: 5, AO: 14, BH: 10, BW: 14, CI: 18, CM: 19.25, DZ: 19, EG: 14, ET: 15, GH: 15, IL: 18,
  JO: 16, KE: 16, LB: 11, MA: 20, MG: 20, MU: 15, MZ: 16, NA: 15, NG: 7.5, OM: 5, RW: 18,
  SA: 15, SN: 18, TN: 19, TZ: 18, UG: 18, ZA: 15, ZM: 16, ZW: 15,
  // Americas
  AR: 21, BB: 17.5, BO: 13, BS: 10, CA: 5, CL: 19, CO: 19, CR: 13, DO: 18, EC: 15, GT: 12,
  HN: 15, JM: 15, MX: 16, NI: 15, PA: 7, PE: 18, PY: 10, SV: 13, TT: 12.5, UY: 22, VE: 16,
}

/**
 * Reduced rates by product tax category, where a country applies one to that kind of
 * digital product (same sources). `ebook`: electronic books and other e-publications,
 * reduced in the EU since Directive (EU) 2018/1713, zero-rated in the UK since 2020-05-01.
 * A country not listed for a category charges its standard rate.
 */
export const REDUCED_RATES: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  ebook: {AT: 10, BE: 6, DE: 7, ES: 4, FR: 5.5, GB: 0, IT: 4, LU: 3, NL: 9, PL: 5, PT: 6, SE: 6},
}

/** The tax categories products can have (`standard` charges the standard rate). */
export const TAX_CATEGORIES = ['standard', ...Object.keys(REDUCED_RATES)] as const

/** What the tax is called in English, where it is not "VAT". */
const LABELS: Readonly<Record<string, string>> = {
  AU: 'GST', CA: 'GST', IN: 'GST', JP: 'consumption tax', MY: 'SST', NZ: 'GST', SG: 'GST', US: 'sales tax',
}

/** "VAT", "GST", "sales tax", ... for a country. */
export function taxLabel(country: string): string {
  return LABELS[country] ?? 'VAT'
}
