import {existsSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {describe, expect, it} from 'vitest'

import {ROOT} from './helpers/run.js'

/** README.md and every page under docs/. */
const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))]

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown.replaceAll(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replaceAll(/`[^`\n]*`/g, '')
}

/** Inline links [text](target "title") and reference definitions [id]: target. */
function links(markdown: string): string[] {
  const text = prose(markdown)
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1])
  const references = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1])
  return [...inline, ...references]
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  const withoutCode = markdown.replaceAll(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
  for (const m of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = m[1]
      .toLowerCase()
      .replaceAll(/[^\p{L}\p{N}\s_-]/gu, '')
      .replaceAll(' ', '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return out
}

describe('links in README.md and docs/', () => {
  it('finds the pages and their links (the checker itself works)', () => {
    expect(pages).toContain('docs/api.md')
    expect(pages).toContain('docs/commands.md')
    expect(links('see [a](docs/a.md#x) and [b]: <b.md>\n```\n[not](c.md)\n```\n`[no](d.md)`')).toEqual(['docs/a.md#x'])
    expect(links('[id]: other.md "t"')).toEqual(['other.md'])
    expect(anchors('# The `pricectl x [--y]` command\n## A\n## A\n```\n# not\n```')).toEqual(new Set(['the-pricectl-x---y-command', 'a', 'a-1']))
  })

  it.each(pages)('every relative link of %s resolves to a file in the repository (and a heading)', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8')
    const broken: string[] = []
    for (const link of links(text)) {
      if (/^[a-z][a-z\d+.-]*:/i.test(link)) continue // http:, https:, mailto:
      const [path, fragment] = link.split('#') as [string, string | undefined]
      const target = path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURIComponent(path))
      if (relative(ROOT, target).startsWith('..')) {
        broken.push(`${link}: outside the repository`)
        continue
      }
      if (!existsSync(target)) {
        broken.push(`${link}: no such file`)
        continue
      }
      if (fragment && statSync(target).isFile() && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(fragment)) {
        broken.push(`${link}: no heading #${fragment}`)
      }
    }
    expect(broken).toEqual([])
  })

  it('no page points at the design notes or the service spec, which are not in the repository', () => {
    for (const page of pages) {
      expect(readFileSync(join(ROOT, page), 'utf8'), page).not.toMatch(/DESIGN\.md|spec\/pricing-service-api\.md/)
    }
  })
})
