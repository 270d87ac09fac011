/**
 * Store-wide settings the engine reads through the port (ConfigRepository.setting; one store
 * is one organisation): their names, and what applies while a store has none set.
 */

/** The setting of the country used when neither the request, the user nor the IP gives one. */
export const DEFAULT_COUNTRY_SETTING = 'default_country'
/** The default country when the store has none set. */
export const FALLBACK_COUNTRY = 'US'
