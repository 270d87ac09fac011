/** Prompts only with a person at a terminal: stdin and stdout are TTYs and CI is not set. */
export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY) && !process.env.CI
}
