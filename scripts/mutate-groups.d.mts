// Types of mutate-groups.mjs (plain ESM, shared by stryker.config.mjs and the mutation tests' setup).
export type MutateGroup = {
  /** What Stryker mutates: a file, or `file:from-to` for lines of it. */
  mutate: string[]
  /** The test files run against the group's mutants. */
  tests: string[]
}
export const GROUPS: Record<string, MutateGroup>
export function chosenGroups(env?: NodeJS.ProcessEnv): string[]
