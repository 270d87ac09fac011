/** The ISO 4217 list of the `currency-codes` package (its main entry adds helpers we do not need). */
declare module 'currency-codes/data.js' {
  const data: {code: string; countries: string[]; currency: string; digits: number; number: string}[]
  export default data
}
