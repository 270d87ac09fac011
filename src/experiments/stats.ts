import {beta, type Rng} from './random.js'

/**
 * The value model shared by the bandit and `experiments results` (docs/experiments.md,
 * "Thompson sampling on revenue per visitor"): P(conversion) is sampled from a Beta, the value
 * of a conversion is not (the arm's price already says it well), shrunk towards the nominal
 * price by one pseudo-conversion so one odd sale does not dominate.
 */
export type ArmOutcome = {
  arm_id: string
  /** Distinct exposed visitors who bought a product of the experiment after exposure. */
  conversions: number
  /** Nominal value of one conversion: the arm's USD price per month, in cents. */
  nominal_minor: number
  /** Attributed revenue in USD cents. */
  revenue_minor: number
  visitors: number
}

export function posterior(o: ArmOutcome): {a: number; b: number} {
  const c = Math.min(o.conversions, o.visitors)
  return {a: 1 + c, b: 1 + o.visitors - c}
}

/** Value of one conversion in USD cents (observed, shrunk towards the nominal price). */
export function conversionValue(o: ArmOutcome): number {
  return (o.revenue_minor + o.nominal_minor) / (o.conversions + 1)
}

/**
 * Thompson sampling: one draw of revenue per visitor per arm from the current
 * posteriors; the highest wins. When no arm has any value (free products), conversion
 * alone decides. Returns the index of the chosen arm.
 */
export function thompsonChoice(arms: ArmOutcome[], rng: Rng): number {
  const values = arms.map(conversionValue)
  const useValue = values.some((v) => v > 0)
  let best = 0
  let bestScore = -Infinity
  for (let i = 0; i < arms.length; i++) {
    const {a, b} = posterior(arms[i])
    const score = beta(rng, a, b) * (useValue ? values[i] : 1)
    if (score > bestScore) {
      bestScore = score
      best = i
    }
  }
  return best
}

/**
 * Probability that each arm has the highest revenue per visitor, by Monte Carlo over
 * the posteriors (`draws` samples from a seeded generator). Sums to 1: every draw has
 * exactly one winner.
 */
export function probabilityBest(arms: ArmOutcome[], rng: Rng, draws: number): number[] {
  const wins = Array.from({length: arms.length}, () => 0)
  if (arms.length === 0) return wins
  const values = arms.map(conversionValue)
  const useValue = values.some((v) => v > 0)
  const params = arms.map(posterior)
  for (let d = 0; d < draws; d++) {
    let best = 0
    let bestScore = -Infinity
    for (let i = 0; i < arms.length; i++) {
      const score = beta(rng, params[i].a, params[i].b) * (useValue ? values[i] : 1)
      if (score > bestScore) {
        bestScore = score
        best = i
      }
    }
    wins[best]++
  }
  return wins.map((w) => w / draws)
}

// ------------------------------------------------------------------ Beta quantiles

const LANCZOS = [676.520_368_121_885_1, -1259.139_216_722_402_8, 771.323_428_777_653_13, -176.615_029_162_140_59, 12.507_343_278_686_905, -0.138_571_095_265_720_12, 9.984_369_578_019_571_6e-6, 1.505_632_735_149_311_6e-7]

/** log Gamma(x) for x > 0 (Lanczos, g = 7). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x)
  const z = x - 1
  let s = 0.999_999_999_999_809_93
  for (let i = 0; i < LANCZOS.length; i++) s += LANCZOS[i] / (z + i + 1)
  const t = z + LANCZOS.length - 0.5
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(s)
}

/** Continued fraction of the incomplete beta (modified Lentz). */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300
  let c = 1
  // betaCdf calls it with x <= (a + 1) / (a + b + 2), where this is at least 2 / (a + b + 2): never 0.
  let d = 1 - ((a + b) * x) / (a + 1)
  d = 1 / d
  let h = d
  for (let m = 1; m <= 100_000; m++) {
    const m2 = 2 * m
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    h *= d * c
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const del = d * c
    h *= del
    if (Math.abs(del - 1) < 1e-14) break
  }
  return h
}

/** Regularized incomplete beta I_x(a, b): the CDF of Beta(a, b) at x. */
export function betaCdf(x: number, a: number, b: number): number {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const lnFront = logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x)
  // The continued fraction converges fast on the side of the mean; use symmetry on the other.
  if (x < (a + 1) / (a + b + 2)) return (Math.exp(lnFront) * betaContinuedFraction(x, a, b)) / a
  return 1 - (Math.exp(lnFront) * betaContinuedFraction(1 - x, b, a)) / b
}

/** The p-quantile of Beta(a, b), by bisection on the CDF (exact to ~1e-12). */
export function betaQuantile(p: number, a: number, b: number): number {
  if (p <= 0) return 0
  if (p >= 1) return 1
  let lo = 0
  let hi = 1
  // Each step halves the bracket: it is under 1e-13 after 44 steps, whatever the CDF returns.
  while (hi - lo > 1e-13) {
    const mid = (lo + hi) / 2
    if (betaCdf(mid, a, b) < p) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

/** Equal-tailed 95% credible interval of an arm's conversion rate. */
export function conversionInterval(o: ArmOutcome, level = 0.95): [number, number] {
  const {a, b} = posterior(o)
  const tail = (1 - level) / 2
  return [betaQuantile(tail, a, b), betaQuantile(1 - tail, a, b)]
}
