/**
 * The config part of the storage port (see ../port.ts): FX rates, localization factors,
 * rounding rules, gateway settings and store-wide settings.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ConfigRepository {}
