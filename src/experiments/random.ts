/**
 * Seeded randomness for the bandit, the results and the simulation. Everything random
 * in experiments comes from here, so the same seed gives the same arms and figures.
 */

export type Rng = () => number

/** 128 bits of hash of a string (cyrb128): seeds sfc32 from any key. */
function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1_779_033_703
  let h2 = 3_144_134_277
  let h3 = 1_013_904_242
  let h4 = 2_773_480_762
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i)
    h1 = h2 ^ Math.imul(h1 ^ k, 597_399_067)
    h2 = h3 ^ Math.imul(h2 ^ k, 2_869_860_233)
    h3 = h4 ^ Math.imul(h3 ^ k, 951_274_213)
    h4 = h1 ^ Math.imul(h4 ^ k, 2_716_044_179)
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597_399_067)
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2_869_860_233)
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951_274_213)
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2_716_044_179)
  h1 ^= h2 ^ h3 ^ h4
  h2 ^= h1
  h3 ^= h1
  h4 ^= h1
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0]
}

/**
 * A fast 32-bit generator (sfc32) seeded from the given parts, e.g. (seed, experiment,
 * visitor): the draw for a visitor depends only on those, not on what ran before, so
 * an assignment is reproducible in any process and in any order.
 */
export function seededRng(...parts: (number | string)[]): Rng {
  const [a, b, c, d] = cyrb128(parts.join('\u0000'))
  const next = sfc32(a, b, c, d)
  // Discard the first outputs: sfc32 mixes its state in the first few rounds.
  for (let i = 0; i < 12; i++) next()
  return next
}

/**
 * sfc32 from its state. The generator is returned, not named: a bundle built with esbuild's
 * keepNames names each named closure when it is made (a property definition per visitor;
 * docs/performance.md "New users: write-behind").
 */
function sfc32(a: number, b: number, c: number, d: number): Rng {
  return () => {
    a |= 0
    b |= 0
    c |= 0
    d |= 0
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return (t >>> 0) / 4_294_967_296
  }
}

/** Standard normal (Marsaglia polar method). */
export function normal(rng: Rng): number {
  for (;;) {
    const u = rng() * 2 - 1
    const v = rng() * 2 - 1
    const s = u * u + v * v
    if (s > 0 && s < 1) return u * Math.sqrt((-2 * Math.log(s)) / s)
  }
}

/** Gamma(shape, 1) by Marsaglia and Tsang; shape < 1 boosted by U^(1/shape). */
export function gamma(rng: Rng, shape: number): number {
  if (shape < 1) {
    const u = rng()
    return gamma(rng, shape + 1) * Math.pow(u === 0 ? Number.MIN_VALUE : u, 1 / shape)
  }
  const d = shape - 1 / 3
  const c = 1 / Math.sqrt(9 * d)
  for (;;) {
    let x: number
    let v: number
    do {
      x = normal(rng)
      v = 1 + c * x
    } while (v <= 0)
    v = v * v * v
    const u = rng()
    if (u < 1 - 0.0331 * x * x * x * x) return d * v
    if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v
  }
}

/** Beta(a, b) as X / (X + Y) of two gammas. */
export function beta(rng: Rng, a: number, b: number): number {
  const x = gamma(rng, a)
  const y = gamma(rng, b)
  return x / (x + y)
}

/** A random 31-bit seed, for experiments created without one (stored, so still reproducible). */
export function freshSeed(): number {
  return Math.floor(Math.random() * 2_147_483_647)
}
