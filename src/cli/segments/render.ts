import {type Column, csv, recordTable, table} from '../render.js'
import {fromMinor} from '../../currency.js'
import type {Audience, AudiencePrice} from '../../segments/audiences.js'
import type {Campaign} from '../../segments/campaigns.js'
import {segmentText} from '../../segments/common.js'
import {type Package, packageSegment} from '../../segments/packages.js'
import {ruleText} from '../../segments/rules.js'

/** Human output of the audience, package and campaign commands; --json prints the schemas' shapes instead. */

export function audiencePriceText(p: AudiencePrice): string {
  return p.multiplier === null ? `${p.product} ${fromMinor(p.amount_minor!, p.currency!)} ${p.currency}` : `${p.product} x${p.multiplier}`
}

const rulesText = (a: Audience) => (a.rules.length ? a.rules.map((r) => ruleText(r)).join('\n') : '(no rules: everyone)')

const audienceColumns: Column<Audience>[] = [
  {header: 'api_id', value: (a) => a.api_id},
  {header: 'name', value: (a) => a.name},
  {header: 'priority', value: (a) => a.priority},
  {header: 'rules', value: rulesText},
  {header: 'prices', value: (a) => a.prices.map((p) => audiencePriceText(p)).join('\n')},
]

export const audiencesTable = (as: Audience[]) => table(as, audienceColumns)
export const audiencesCsv = (as: Audience[]) => csv(as, audienceColumns.map((c) => ({...c, value: (a: Audience) => String(c.value(a)).replaceAll('\n', '; ')})))

export function audienceDetail(a: Audience): string {
  return recordTable([
    ['api_id', a.api_id],
    ['name', a.name],
    ['priority', a.priority],
    ['rules (all must hold)', rulesText(a)],
    ['prices', a.prices.map((p) => audiencePriceText(p)).join('\n')],
    ['updated', a.updated_at],
  ])
}

const packageColumns: Column<Package>[] = [
  {header: 'api_id', value: (p) => p.api_id},
  {header: 'name', value: (p) => p.name},
  {header: 'products', value: (p) => p.products.join(', ')},
  {header: 'segment', value: (p) => packageSegment(p)},
]

export const packagesTable = (ps: Package[]) => table(ps, packageColumns)
export const packagesCsv = (ps: Package[]) => csv(ps, packageColumns)

export function packageDetail(p: Package): string {
  return recordTable([
    ['api_id', p.api_id],
    ['name', p.name],
    ['products', p.products.join(', ')],
    ['segment', packageSegment(p)],
    ['updated', p.updated_at],
  ])
}

function windowText(c: Campaign): string {
  if (!c.active_from && !c.active_till) return 'always'
  return `${c.active_from ?? '…'} .. ${c.active_till ?? '…'}`
}

type CampaignRow = {c: Campaign; state: string}

const campaignColumns: Column<CampaignRow>[] = [
  {header: 'api_id', value: (r) => r.c.api_id},
  {header: 'name', value: (r) => r.c.name},
  {header: 'coupon', value: (r) => r.c.coupon},
  {header: 'segment', value: (r) => segmentText(r.c.countries, r.c.audience)},
  {header: 'products', value: (r) => (r.c.products.length ? r.c.products.join(', ') : 'all')},
  {header: 'window', value: (r) => windowText(r.c)},
  {header: 'state', value: (r) => r.state},
]

export const campaignsTable = (rows: CampaignRow[]) => table(rows, campaignColumns)
export const campaignsCsv = (rows: CampaignRow[]) => csv(rows, campaignColumns)

export function campaignDetail(r: CampaignRow): string {
  return recordTable(campaignColumns.map((c) => [c.header, c.value(r)]))
}
