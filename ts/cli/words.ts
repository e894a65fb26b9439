/**
 * The tools speak to a model: their messages name input fields (`offset=2001`,
 * `old_string`, `include_ignored`) and other tools ("Read the file again with
 * file_read"). A person at the terminal has flags and commands instead, so every message
 * and note the CLI prints passes through `forPerson`, which says the same in the CLI's
 * words. The table is per field, not per message, so a reworded message still reads right.
 */

/** [model's words, person's words], applied in order (longer forms first). */
const PHRASES: ReadonlyArray<readonly [RegExp, string]> = [
  // Paging and ranges.
  [/\boffset=(\d+) and limit=(\d+)/g, '--offset $1 --limit $2'],
  [/\b(?:with|at) offset=(\d+)/g, 'with --offset $1'],
  [/\boffset=(\d+)/g, '--offset $1'],
  [/\blimit=(\d+)/g, '--limit $1'],
  [/\ban offset from (\d+) to (\d[\d,]*)/g, 'an --offset from $1 to $2'],
  [/\b[Oo]ffset ([\d,]+) is past/g, '--offset $1 is past'],
  [/\buse offset\/limit\b/gi, 'use --offset and --limit'],
  [/\boffset and limit\b/g, '--offset and --limit'],
  [/\b(?:head_limit|max_results)\b/g, '--max'],
  [/\btop_k\b/g, '--top'],
  [/\bmax_chars=(\d+)/g, '--max-chars $1'],
  [/\bmax_chars\b/g, '--max-chars'],
  [/\bpages=("?)([\d,-]+)\1/g, '--pages $2'],
  [/\b(?:with )?its pages parameter\b/g, 'with --pages'],
  [/\bgive pages\b/g, 'give --pages'],
  [/\bpages is only for PDF\b/g, '--pages is only for PDF'],
  // Edit.
  [/\bset replace_all to true\b/g, 'add --all'],
  [/\bset replace_all\b/g, 'add --all'],
  [/\breplace_all\b/g, '--all'],
  [/\bold_string\b/g, '--old'],
  [/\bnew_string\b/g, '--new'],
  // Search switches.
  [/\bset include_ignored or include_hidden\b/g, 'add --no-ignore or --hidden'],
  [/\bset include_ignored\b/g, 'add --no-ignore'],
  [/\bset include_hidden\b/g, 'add --hidden'],
  [/\binclude_ignored\b/g, '--no-ignore'],
  [/\binclude_hidden\b/g, '--hidden'],
  [/\bset multiline: true\b/g, 'add -U (--multiline)'],
  [/\bmultiline: true\b/g, '-U'],
  [/\bcase_sensitive: false\b/g, '-i'],
  [/\bnaming include\b/g, 'naming --include'],
  [/\bbackend='literal'/g, 'the built-in ranker (fsgate search uses it)'],
  // Other tools, as commands.
  [/\bcall (?:file_read|Read) again\b/g, 'run fsgate read again'],
  [/\bRead the file again with (?:file_read|Read)\b/g, 'Look at the file again with fsgate read'],
  [/\bRead the line\b/g, 'Read the line with fsgate read'],
  [/\b(?:with|use) (?:file_read|the Read tool)\b/g, 'use fsgate read'],
  [/\bfile_read\b/g, 'fsgate read'],
  [/\bpdf_read\b/g, 'fsgate pdf'],
  [/\b(?:content_search|the Grep tool)\b/g, 'fsgate grep'],
  [/\bglob_search\b/g, 'fsgate glob'],
  [/\bsemantic_code_search\b/g, 'fsgate search'],
  // Where relative paths start.
  [/relative paths start at the workspace \(([^)]*)\)/g, 'the workspace is $1'],
]

/** A tool's message or note in the CLI's words. */
export function forPerson(text: string): string {
  let out = text
  for (const [re, to] of PHRASES) out = out.replace(re, to)
  return out
}

/** The model-facing words `forPerson` removes; a test checks that no CLI message keeps one. */
export const MODEL_WORDS = [
  'offset=',
  'limit=',
  'old_string',
  'new_string',
  'replace_all',
  'include_ignored',
  'include_hidden',
  'head_limit',
  'max_results',
  'max_chars',
  'top_k',
  'file_read',
  'pdf_read',
  'content_search',
  'glob_search',
  'semantic_code_search',
  'multiline: true',
]
