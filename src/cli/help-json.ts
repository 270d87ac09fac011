import type {Command, Config} from '@oclif/core'
import {z} from 'zod'

import {NotFoundError} from '../errors.js'

/**
 * `help --json`: the commands and topics (or the one asked) from oclif's manifest, as data:
 * what the help pages print, for scripts and tools. Ids are written as typed, with spaces.
 */
const Entry = z.object({id: z.string(), summary: z.string()})
const Topic = z.object({description: z.string(), name: z.string()})
const Flag = z.object({
  char: z.string().optional(),
  default: z.unknown().optional(),
  description: z.string(),
  multiple: z.boolean(),
  name: z.string(),
  options: z.array(z.string()).optional(),
  required: z.boolean(),
  type: z.enum(['boolean', 'option']),
})
const Arg = z.object({description: z.string(), name: z.string(), options: z.array(z.string()).optional(), required: z.boolean()})

export const HelpOutput = z.union([
  z.object({commands: z.array(Entry), name: z.string(), topics: z.array(Topic), version: z.string()}),
  z.object({commands: z.array(Entry), topic: Topic, topics: z.array(Topic)}),
  z.object({
    command: z.object({
      aliases: z.array(z.string()),
      args: z.array(Arg),
      description: z.string(),
      examples: z.array(z.string()),
      flags: z.array(Flag),
      id: z.string(),
      summary: z.string(),
    }),
  }),
])

export function helpJson(config: Config, words: string[]): z.infer<typeof HelpOutput> {
  const sep = config.topicSeparator
  const spaced = (id: string) => id.replaceAll(':', sep)
  const render = (text: string | undefined) => (text ?? '').replaceAll('<%= config.bin %>', config.bin).trim()
  const visible = config.commands.filter((c) => !c.hidden).sort((a, b) => a.id.localeCompare(b.id))
  const entry = (c: Command.Loadable) => ({id: spaced(c.id), summary: render(c.summary ?? c.description?.split('\n')[0])})
  const topics = config.topics.filter((t) => !t.hidden).sort((a, b) => a.name.localeCompare(b.name))
  const topicOut = (t: {description?: string; name: string}) => ({description: render(t.description), name: spaced(t.name)})
  if (words.length === 0) {
    return {commands: visible.map(entry), name: config.bin, topics: topics.filter((t) => !t.name.includes(':')).map(topicOut), version: config.version}
  }
  const id = words.join(':')
  const command = config.findCommand(id)
  if (command && !command.hidden) {
    const description = render(command.description)
    return {
      command: {
        aliases: command.aliases.map(spaced),
        args: Object.values(command.args ?? {}).map((a) => ({
          description: a.description ?? '',
          name: a.name,
          ...(a.options ? {options: [...a.options]} : {}),
          required: Boolean(a.required),
        })),
        description,
        examples: (command.examples ?? []).map((e) => render(typeof e === 'string' ? e : e.command)),
        flags: Object.values(command.flags ?? {})
          .filter((f) => !f.hidden)
          .sort((a, b) => a.name.localeCompare(b.name))
          .map((f) => ({
            ...(f.char ? {char: f.char} : {}),
            ...(f.type === 'option' && f.default !== undefined && typeof f.default !== 'function' ? {default: f.default} : {}),
            description: render(f.summary ?? f.description),
            multiple: f.type === 'option' && Boolean(f.multiple),
            name: f.name,
            ...(f.type === 'option' && f.options ? {options: [...f.options]} : {}),
            required: Boolean(f.required),
            type: f.type,
          })),
        id: spaced(command.id),
        summary: render(command.summary ?? description.split('\n')[0]),
      },
    }
  }
  const topic = config.findTopic(id)
  if (topic && !topic.hidden) {
    return {
      commands: visible.filter((c) => c.id.startsWith(`${id}:`)).map(entry),
      topic: topicOut(topic),
      topics: topics.filter((t) => t.name.startsWith(`${id}:`)).map(topicOut),
    }
  }
  throw new NotFoundError(`no command or topic "${words.join(' ')}" (list them with: ${config.bin} help)`)
}
