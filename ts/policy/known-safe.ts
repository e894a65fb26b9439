/**
 * The known read-only programs (issue 17): the only commands the shell tool rates `low`.
 * A command is low only when every simple command in it is a program in KNOWN_SAFE,
 * given only the options and subcommands its entry lists, with every word literal,
 * every path inside the workspace, and no redirection but the harmless ones (see
 * ./risk/known-safe-check.ts, which applies this table). Anything else is at least
 * medium, whatever ./risk.ts finds (it still finds what is high).
 *
 * This file is data only, so that a reviewer reads the whole policy here. Each entry says
 * which options a program may be given and what their values are, what its operands
 * are, whether an unquoted glob may reach it, and (in `risky`) the options left out on
 * purpose, with why: those give the model a reason it can act on.
 *
 * How options are read: GNU style. Short options cluster (`-la`); a short option that
 * takes a value takes the rest of its word (`-n5`) or the next word; a long option takes
 * `--name=value` or, when it needs a value, the next word. Long names must be written
 * out in full (getopt would take `--out` for `--output`; here an abbreviation is simply
 * not on the list). `--` ends the options. Options may follow operands unless the entry
 * is `optionsFirst`.
 */

/** What an option's value (or an operand) may be. */
export type Value =
  /** Any literal word: a pattern, a format, a field list. */
  | 'text'
  /** A count or a size: digits, with a sign or a unit letter (`+5`, `10K`, `-3`). */
  | 'number'
  /** A file or folder, which must be inside the workspace (or allowedPaths). */
  | 'path'
  /** Only these words. */
  | readonly string[]

/** Options: `null` takes no value; a long option may have `=value` only when its value is listed. */
export type Options = Readonly<Record<string, Value | null>>

export interface SafeProgram {
  /** Why it is on the list and what was left out, in a few words. */
  note: string
  /** The options it may be given. */
  options?: Options
  /** Long options that take an optional value written only as `--name=value` (`--color=auto`). */
  optionalValue?: Readonly<Record<string, Value>>
  /** Options left out on purpose: what they do, finishing "the option X of P …". */
  risky?: Readonly<Record<string, string>>
  /**
   * What its operands are: `paths` (files and folders, checked), `text` (not files:
   * echo's words, which's names), `pattern-paths` (a pattern, then paths: grep, rg),
   * `none`, or `find` (paths, then an expression of the primaries in `options`).
   */
  operands: 'paths' | 'text' | 'pattern-paths' | 'none' | 'find'
  /** Options that give the pattern, so that every operand is a path (`grep -e x f`). */
  patternOptions?: readonly string[]
  /** Each operand must match this (date's `+FORMAT`, sleep's seconds). */
  operandPattern?: RegExp
  /** At most this many operands (uniq's second operand is a file it writes). */
  maxOperands?: number
  /** At least this many operands (`cd` alone goes to the home folder). */
  minOperands?: number
  /** Operands are allowed only with one of these options (`git branch --list pattern`). */
  operandsNeed?: readonly string[]
  /** `-5` is a count (head, tail, git log). */
  numericOption?: boolean
  /** Options end at the first operand (echo prints `-n` after a word; git's global options). */
  optionsFirst?: boolean
  /**
   * An unquoted glob may be one of its words: no option it has, listed or not, does harm,
   * so a file named `--pre=sh` does none. Without this a glob is allowed only where it
   * cannot become an option (it starts with a literal, `src/*.ts`) and the operand count
   * is free.
   */
  globs?: boolean
  /** Text its operands must not hold, and why (jq's `env` prints the environment). */
  refuseText?: { pattern: RegExp; reason: string }
  /** Subcommands, each with its own options; the program's `options` come before it. */
  subcommands?: Readonly<Record<string, SafeProgram>>
  /** Runs the command that follows its options and `leading` operands (time, timeout). */
  wrapper?: { leading: number; leadingPattern?: RegExp }
  /** Changes the shell's folder to its operand (`cd`). */
  changesFolder?: boolean
  /** Low only when it runs in the workspace folder itself (git finds a repository, and its config, from there). */
  root?: boolean
}

const NUMBER = 'number' as const
const TEXT = 'text' as const
const PATH = 'path' as const
const COLOR = ['auto', 'always', 'never'] as const
const flags = (...names: string[]): Options => Object.fromEntries(names.map((n) => [n, null]))

/** git's options that show history and differences, shared by log, show and diff. */
const GIT_DIFF_OPTIONS: Options = {
  ...flags('-p', '-u', '--patch', '-s', '--no-patch', '--stat', '--numstat', '--shortstat', '--name-only', '--name-status', '--summary', '--raw', '--cc', '--no-color', '-w', '--ignore-all-space', '-b', '--ignore-space-change', '--ignore-blank-lines', '--no-renames', '-M', '--find-renames', '--minimal', '--patience', '--histogram', '-R', '--full-index', '--binary', '--no-ext-diff', '--no-textconv', '--exit-code', '--quiet', '--check', '-z'),
  '-U': NUMBER,
  '--unified': NUMBER,
  '--diff-filter': TEXT,
  '--stat-width': NUMBER,
  '--relative': PATH,
  '--word-diff-regex': TEXT,
}
const GIT_DIFF_OPTIONAL: Record<string, Value> = { '--abbrev': NUMBER, '--color': COLOR, '--word-diff': ['color', 'plain', 'porcelain', 'none'], '--color-moved': TEXT, '--dirstat': TEXT }
const GIT_DIFF_RISKY: Record<string, string> = {
  '--output': 'writes a file',
  '--ext-diff': 'runs the external diff program of the configuration',
  '--textconv': 'runs the text conversion programs of the configuration',
  '--exec-path': 'changes where git finds the programs it runs',
}
const GIT_LOG_OPTIONS: Options = {
  ...GIT_DIFF_OPTIONS,
  ...flags('--oneline', '--graph', '--all', '--reverse', '--no-merges', '--merges', '--first-parent', '--follow', '--abbrev-commit', '--no-abbrev-commit', '--branches', '--tags', '--remotes', '--left-right', '--cherry-pick', '--topo-order', '--date-order', '--no-decorate', '--source', '--use-mailmap', '-i', '--regexp-ignore-case', '-E', '--extended-regexp', '-F', '--fixed-strings', '--boundary', '--full-history', '--simplify-by-decoration', '--ancestry-path', '--no-walk', '--show-notes', '--no-notes'),
  '-n': NUMBER,
  '--max-count': NUMBER,
  '--skip': NUMBER,
  '--since': TEXT,
  '--after': TEXT,
  '--until': TEXT,
  '--before': TEXT,
  '--author': TEXT,
  '--committer': TEXT,
  '--grep': TEXT,
  '-S': TEXT,
  '-G': TEXT,
  '-L': TEXT,
  '--min-parents': NUMBER,
  '--max-parents': NUMBER,
}
const GIT_LOG_OPTIONAL: Record<string, Value> = { ...GIT_DIFF_OPTIONAL, '--format': TEXT, '--pretty': TEXT, '--decorate': ['short', 'full', 'auto', 'no'], '--date': TEXT }

/** git's read-only subcommands. Operands are revisions and paths: every one is checked as a path. */
const GIT_SUBCOMMANDS: Record<string, SafeProgram> = {
  status: {
    note: 'shows the working tree state',
    options: flags('-s', '--short', '-b', '--branch', '--long', '-v', '--verbose', '--show-stash', '--ahead-behind', '--no-ahead-behind', '-z', '--no-renames', '--renames'),
    optionalValue: { '--porcelain': ['v1', 'v2', '1', '2'], '--untracked-files': ['no', 'normal', 'all'], '--ignored': ['traditional', 'no', 'matching'], '--column': TEXT, '--ignore-submodules': ['none', 'untracked', 'dirty', 'all'] },
    operands: 'paths',
  },
  log: { note: 'shows history', options: GIT_LOG_OPTIONS, optionalValue: GIT_LOG_OPTIONAL, risky: GIT_DIFF_RISKY, operands: 'paths', numericOption: true },
  show: { note: 'shows commits and files', options: GIT_LOG_OPTIONS, optionalValue: GIT_LOG_OPTIONAL, risky: GIT_DIFF_RISKY, operands: 'paths' },
  diff: {
    note: 'shows differences',
    options: { ...GIT_DIFF_OPTIONS, ...flags('--cached', '--staged', '--merge-base', '--no-index') },
    optionalValue: GIT_DIFF_OPTIONAL,
    risky: GIT_DIFF_RISKY,
    operands: 'paths',
  },
  branch: {
    note: 'lists branches (with --list for a pattern); any other operand creates one',
    options: { ...flags('-l', '--list', '-a', '--all', '-r', '--remotes', '-v', '-vv', '--verbose', '--show-current', '--no-color', '-i', '--ignore-case', '--omit-empty'), '--sort': TEXT, '--format': TEXT, '--points-at': TEXT },
    optionalValue: { '--color': COLOR, '--contains': TEXT, '--no-contains': TEXT, '--merged': TEXT, '--no-merged': TEXT, '--column': TEXT, '--abbrev': NUMBER },
    risky: { '-d': 'deletes a branch', '-D': 'deletes a branch', '-m': 'renames a branch', '-M': 'renames a branch', '-c': 'copies a branch', '-f': 'moves a branch', '-u': 'changes the upstream', '--edit-description': 'runs an editor' },
    operands: 'text',
    operandsNeed: ['-l', '--list'],
  },
  'rev-parse': {
    note: 'prints names and folders of the repository',
    options: flags('--abbrev-ref', '--show-toplevel', '--show-prefix', '--show-cdup', '--git-dir', '--absolute-git-dir', '--git-common-dir', '--is-inside-work-tree', '--is-inside-git-dir', '--is-bare-repository', '--is-shallow-repository', '--verify', '-q', '--quiet', '--symbolic', '--symbolic-full-name', '--all', '--branches', '--tags', '--show-superproject-working-tree', '--sq'),
    optionalValue: { '--short': NUMBER },
    operands: 'text',
  },
  'ls-files': {
    note: 'lists files in the index',
    options: { ...flags('-c', '--cached', '-m', '--modified', '-o', '--others', '-d', '--deleted', '-i', '--ignored', '-s', '--stage', '-u', '--unmerged', '-z', '-t', '-v', '--directory', '--no-empty-directory', '--exclude-standard', '--error-unmatch', '--full-name', '--recurse-submodules', '--eol', '--deduplicate'), '-x': TEXT, '--exclude': TEXT },
    optionalValue: { '--abbrev': NUMBER, '--format': TEXT },
    risky: { '-X': 'reads a pattern file, which can be anywhere', '--exclude-from': 'reads a pattern file, which can be anywhere' },
    operands: 'paths',
  },
  'ls-tree': { note: 'lists a tree', options: flags('-r', '-t', '-d', '-l', '--long', '-z', '--name-only', '--name-status', '--object-only', '--full-name', '--full-tree'), optionalValue: { '--abbrev': NUMBER, '--format': TEXT }, operands: 'paths' },
  blame: {
    note: 'shows who changed each line',
    options: { ...flags('-w', '-s', '-e', '--show-email', '-p', '--porcelain', '--line-porcelain', '-l', '-t', '-f', '--show-name', '-n', '--show-number', '-b', '--root', '--show-stats', '--incremental'), '-L': TEXT },
    optionalValue: { '--abbrev': NUMBER, '--date': TEXT, '--color-lines': TEXT, '--color-by-age': TEXT },
    risky: { '--textconv': 'runs the text conversion programs of the configuration', '--contents': 'reads a file, which can be anywhere', '-S': 'reads a file, which can be anywhere' },
    operands: 'paths',
  },
  grep: {
    note: 'searches tracked files',
    options: { ...flags('-n', '--line-number', '-i', '--ignore-case', '-l', '--files-with-matches', '-L', '--files-without-match', '-c', '--count', '-v', '--invert-match', '-w', '--word-regexp', '-E', '--extended-regexp', '-F', '--fixed-strings', '-G', '--basic-regexp', '-P', '--perl-regexp', '-h', '-H', '--full-name', '-I', '-q', '--quiet', '--cached', '--untracked', '--no-index', '--break', '--heading', '-o', '--only-matching', '-z', '--null', '--column', '-a', '--text', '--all-match', '--and', '--or', '--not', '--no-color', '-r', '--recursive'), '-e': TEXT, '-m': NUMBER, '--max-count': NUMBER, '-A': NUMBER, '-B': NUMBER, '-C': NUMBER, '--context': NUMBER, '--after-context': NUMBER, '--before-context': NUMBER, '--max-depth': NUMBER, '--threads': NUMBER },
    optionalValue: { '--color': COLOR },
    risky: { '-O': 'opens the files in a pager, a program it runs', '--open-files-in-pager': 'opens the files in a pager, a program it runs', '--textconv': 'runs the text conversion programs of the configuration', '-f': 'reads patterns from a file, which can be anywhere' },
    operands: 'pattern-paths',
    patternOptions: ['-e'],
  },
  describe: { note: 'names a commit', options: flags('--tags', '--all', '--always', '--long', '--exact-match', '--first-parent', '--contains'), optionalValue: { '--abbrev': NUMBER, '--dirty': TEXT, '--broken': TEXT, '--match': TEXT, '--exclude': TEXT, '--candidates': NUMBER }, operands: 'text' },
  shortlog: { note: 'summarises history', options: { ...flags('-s', '--summary', '-n', '--numbered', '-e', '--email', '-c', '--committer', '--all', '--no-merges'), '--since': TEXT, '--until': TEXT }, optionalValue: { '--format': TEXT, '--group': TEXT }, operands: 'paths' },
  'rev-list': { note: 'lists commits', options: { ...flags('--count', '--all', '--reverse', '--no-merges', '--merges', '--first-parent', '--objects', '--left-right', '--cherry-pick', '--topo-order', '--abbrev-commit', '--oneline', '--branches', '--tags'), '-n': NUMBER, '--max-count': NUMBER, '--since': TEXT, '--until': TEXT, '--author': TEXT }, optionalValue: { '--format': TEXT, '--pretty': TEXT }, operands: 'paths', numericOption: true },
  'cat-file': { note: 'prints objects', options: flags('-p', '-t', '-s', '-e', '--batch-all-objects'), risky: { '--textconv': 'runs the text conversion programs of the configuration', '--filters': 'runs the filter programs of the configuration' }, operands: 'text' },
  'show-ref': { note: 'lists references', options: flags('--heads', '--tags', '--head', '-d', '--dereference', '-s', '--hash', '--verify', '-q', '--quiet', '--exists'), operands: 'text' },
  'for-each-ref': { note: 'lists references', options: { ...flags('--no-color'), '--format': TEXT, '--sort': TEXT, '--count': NUMBER, '--points-at': TEXT, '--merged': TEXT, '--no-merged': TEXT, '--contains': TEXT }, optionalValue: { '--color': COLOR }, operands: 'text' },
  'merge-base': { note: 'finds a common ancestor', options: flags('--all', '--octopus', '--is-ancestor', '--independent', '--fork-point'), operands: 'text' },
  'name-rev': { note: 'names a commit', options: flags('--tags', '--all', '--name-only', '--no-undefined', '--always'), operands: 'text' },
  'check-ignore': { note: 'says whether paths are ignored', options: flags('-q', '--quiet', '-v', '--verbose', '-n', '--non-matching', '--no-index'), operands: 'paths' },
  'count-objects': { note: 'counts objects', options: flags('-v', '--verbose', '-H', '--human-readable'), operands: 'none' },
  tag: { note: 'lists tags (only with -l or --list)', options: { ...flags('-l', '--list', '-n', '-i', '--ignore-case', '--omit-empty'), '--sort': TEXT, '--format': TEXT, '--points-at': TEXT }, optionalValue: { '--contains': TEXT, '--no-contains': TEXT, '--merged': TEXT, '--no-merged': TEXT, '--column': TEXT, '--color': COLOR }, operands: 'text', operandsNeed: ['-l', '--list'] },
  stash: { note: 'only `git stash list`, which lists stashes', operands: 'none', optionsFirst: true, subcommands: { list: { note: 'lists stashes', options: flags('--oneline', '--stat'), operands: 'none' } } },
  remote: { note: 'lists remotes (`git remote show` reaches the network)', options: flags('-v', '--verbose'), operands: 'none' },
  version: { note: 'prints its version', options: flags('--build-options'), operands: 'none' },
}

/**
 * The table. Programs that are never low, and why, are in NEVER_SAFE below: build tools,
 * interpreters and package managers run the project's code; wrappers such as xargs, env,
 * sudo or `sh -c` run commands this table does not see.
 */
export const KNOWN_SAFE: Readonly<Record<string, SafeProgram>> = {
  ls: {
    note: 'lists folders; every option only changes the listing',
    options: { ...flags('-l', '-a', '-A', '-h', '-R', '-t', '-r', '-S', '-1', '-d', '-F', '-i', '-s', '-n', '-p', '-x', '-C', '-U', '-X', '-v', '-c', '-u', '-g', '-o', '-G', '-k', '-m', '-Q', '-N', '-b', '-q', '-H', '--all', '--almost-all', '--human-readable', '--recursive', '--reverse', '--directory', '--classify', '--inode', '--size', '--numeric-uid-gid', '--group-directories-first', '--full-time', '--si', '--dereference-command-line', '--escape', '--literal', '--quote-name', '--no-group', '--author'), '-I': TEXT, '--ignore': TEXT, '-w': NUMBER, '--width': NUMBER, '-T': NUMBER, '--tabsize': NUMBER, '--block-size': TEXT, '--sort': TEXT, '--time': TEXT, '--time-style': TEXT, '--format': TEXT, '--indicator-style': TEXT, '--quoting-style': TEXT, '--hide': TEXT },
    optionalValue: { '--color': COLOR, '--hyperlink': COLOR },
    operands: 'paths',
    globs: true,
  },
  cat: { note: 'prints files', options: flags('-A', '-b', '-e', '-E', '-n', '-s', '-t', '-T', '-u', '-v', '--show-all', '--number-nonblank', '--show-ends', '--number', '--squeeze-blank', '--show-tabs', '--show-nonprinting'), operands: 'paths', globs: true },
  tac: { note: 'prints files last line first', options: { ...flags('-b', '-r', '--before', '--regex'), '-s': TEXT, '--separator': TEXT }, operands: 'paths', globs: true },
  nl: { note: 'numbers lines', options: { ...flags('-p', '--no-renumber'), '-b': TEXT, '-n': TEXT, '-w': NUMBER, '-s': TEXT, '-v': NUMBER, '-i': NUMBER, '--body-numbering': TEXT, '--number-format': TEXT, '--number-width': NUMBER, '--number-separator': TEXT }, operands: 'paths', globs: true },
  head: { note: 'prints the first lines', options: { ...flags('-q', '-v', '-z', '--quiet', '--silent', '--verbose', '--zero-terminated'), '-n': NUMBER, '-c': NUMBER, '--lines': NUMBER, '--bytes': NUMBER }, operands: 'paths', numericOption: true, globs: true },
  tail: {
    note: 'prints the last lines; -f is left out (it never ends)',
    options: { ...flags('-q', '-v', '-z', '--quiet', '--silent', '--verbose', '--zero-terminated'), '-n': NUMBER, '-c': NUMBER, '--lines': NUMBER, '--bytes': NUMBER },
    risky: { '-f': 'waits for more lines and never ends', '-F': 'waits for more lines and never ends', '--follow': 'waits for more lines and never ends', '--pid': 'waits on another process' },
    operands: 'paths',
    numericOption: true,
  },
  wc: {
    note: 'counts lines, words and bytes; --files0-from (not listed) could only count, so globs are harmless',
    options: flags('-l', '-w', '-c', '-m', '-L', '--lines', '--words', '--bytes', '--chars', '--max-line-length'),
    operands: 'paths',
    globs: true,
  },
  cut: { note: 'prints fields', options: { ...flags('-s', '-n', '-z', '--complement', '--only-delimited', '--zero-terminated'), '-d': TEXT, '-f': TEXT, '-c': TEXT, '-b': TEXT, '--delimiter': TEXT, '--fields': TEXT, '--characters': TEXT, '--bytes': TEXT, '--output-delimiter': TEXT }, operands: 'paths', globs: true },
  sort: {
    note: 'sorts lines; -o writes a file, --compress-program runs one',
    options: { ...flags('-r', '-n', '-u', '-f', '-b', '-d', '-h', '-V', '-s', '-z', '-c', '-C', '-M', '-g', '-i', '--reverse', '--numeric-sort', '--unique', '--ignore-case', '--ignore-leading-blanks', '--dictionary-order', '--human-numeric-sort', '--version-sort', '--stable', '--zero-terminated', '--check', '--month-sort', '--general-numeric-sort', '--ignore-nonprinting'), '-k': TEXT, '--key': TEXT, '-t': TEXT, '--field-separator': TEXT },
    risky: { '-o': 'writes a file', '--output': 'writes a file', '--compress-program': 'runs a program', '-T': 'writes temporary files in another folder', '--temporary-directory': 'writes temporary files in another folder', '--files0-from': 'reads a list of files, which can be anywhere', '--random-source': 'reads a file, which can be anywhere' },
    operands: 'paths',
  },
  uniq: {
    note: 'drops repeated lines; its second operand is a file it writes, so it gets one',
    options: { ...flags('-c', '-d', '-D', '-u', '-i', '-z', '--count', '--repeated', '--unique', '--ignore-case', '--zero-terminated'), '-f': NUMBER, '-s': NUMBER, '-w': NUMBER, '--skip-fields': NUMBER, '--skip-chars': NUMBER, '--check-chars': NUMBER },
    operands: 'paths',
    maxOperands: 1,
  },
  tr: { note: 'translates characters from its input', options: flags('-d', '-s', '-c', '-C', '-t', '--delete', '--squeeze-repeats', '--complement', '--truncate-set1'), operands: 'text', globs: true },
  rg: {
    note: 'searches files; --pre and -z run programs, so a glob could name them',
    options: {
      ...flags('-n', '-N', '-i', '-S', '-s', '-w', '-x', '-v', '-l', '-c', '-F', '-U', '-o', '-q', '-H', '-I', '-0', '-a', '-u', '-uu', '-P', '--line-number', '--no-line-number', '--ignore-case', '--smart-case', '--case-sensitive', '--word-regexp', '--line-regexp', '--invert-match', '--files-with-matches', '--files-without-match', '--count', '--count-matches', '--fixed-strings', '--multiline', '--only-matching', '--quiet', '--with-filename', '--no-filename', '--null', '--text', '--hidden', '--no-ignore', '--no-ignore-vcs', '--files', '--type-list', '--json', '--vimgrep', '--column', '--no-heading', '--heading', '--trim', '--stats', '--no-messages', '--unrestricted', '--pcre2', '--sort-files', '-p', '--pretty', '--no-config'),
      '-e': TEXT, '--regexp': TEXT, '-g': TEXT, '--glob': TEXT, '--iglob': TEXT, '-t': TEXT, '--type': TEXT, '-T': TEXT, '--type-not': TEXT, '-m': NUMBER, '--max-count': NUMBER, '-d': NUMBER, '--max-depth': NUMBER, '-A': NUMBER, '-B': NUMBER, '-C': NUMBER, '--context': NUMBER, '--after-context': NUMBER, '--before-context': NUMBER, '-M': NUMBER, '--max-columns': NUMBER, '-j': NUMBER, '--threads': NUMBER, '--sort': TEXT, '--sortr': TEXT, '-r': TEXT, '--replace': TEXT, '-f': PATH, '--file': PATH, '--ignore-file': PATH, '--max-filesize': TEXT, '--color': ['auto', 'always', 'never', 'ansi'],
    },
    risky: { '--pre': 'runs a program', '--pre-glob': 'chooses files for --pre, which runs a program', '-z': 'runs decompression programs', '--search-zip': 'runs decompression programs', '--hostname-bin': 'runs a program', '-L': 'follows links, which can lead outside the workspace', '--follow': 'follows links, which can lead outside the workspace' },
    operands: 'pattern-paths',
    patternOptions: ['-e', '--regexp', '-f', '--file', '--files', '--type-list'],
  },
  grep: {
    note: 'searches files; no option of grep runs a program or writes a file',
    options: {
      ...flags('-r', '-n', '-i', '-l', '-L', '-c', '-v', '-w', '-x', '-E', '-F', '-G', '-P', '-o', '-h', '-H', '-s', '-q', '-z', '-Z', '-a', '-I', '-b', '-T', '-y', '--recursive', '--line-number', '--ignore-case', '--no-ignore-case', '--files-with-matches', '--files-without-match', '--count', '--invert-match', '--word-regexp', '--line-regexp', '--extended-regexp', '--fixed-strings', '--basic-regexp', '--perl-regexp', '--only-matching', '--no-filename', '--with-filename', '--no-messages', '--quiet', '--silent', '--null-data', '--null', '--text', '--byte-offset', '--initial-tab'),
      '-e': TEXT, '--regexp': TEXT, '-f': PATH, '--file': PATH, '-m': NUMBER, '--max-count': NUMBER, '-A': NUMBER, '-B': NUMBER, '-C': NUMBER, '--context': NUMBER, '--after-context': NUMBER, '--before-context': NUMBER, '--include': TEXT, '--exclude': TEXT, '--exclude-dir': TEXT, '--exclude-from': PATH, '--label': TEXT,
    },
    optionalValue: { '--color': COLOR, '--colour': COLOR },
    risky: { '-R': 'follows every link, which can lead outside the workspace', '--dereference-recursive': 'follows every link, which can lead outside the workspace' },
    operands: 'pattern-paths',
    patternOptions: ['-e', '--regexp', '-f', '--file'],
    numericOption: true,
    // No bare globs: one could become -R, which follows links.
  },
  find: {
    note: 'lists files; -exec, -ok, -delete and -fprint are left out',
    options: {
      ...flags('-print', '-print0', '-ls', '-prune', '-empty', '-true', '-false', '-not', '!', '-a', '-o', '-and', '-or', '(', ')', ',', '-depth', '-xdev', '-mount', '-readable', '-writable', '-executable', '-nouser', '-nogroup', '-quit', '-noleaf'),
      '-name': TEXT, '-iname': TEXT, '-path': TEXT, '-ipath': TEXT, '-wholename': TEXT, '-iwholename': TEXT, '-regex': TEXT, '-iregex': TEXT, '-regextype': TEXT, '-lname': TEXT, '-ilname': TEXT, '-type': TEXT, '-xtype': TEXT, '-maxdepth': NUMBER, '-mindepth': NUMBER, '-size': NUMBER, '-mtime': NUMBER, '-atime': NUMBER, '-ctime': NUMBER, '-mmin': NUMBER, '-amin': NUMBER, '-cmin': NUMBER, '-newer': PATH, '-anewer': PATH, '-cnewer': PATH, '-samefile': PATH, '-perm': TEXT, '-user': TEXT, '-group': TEXT, '-uid': NUMBER, '-gid': NUMBER, '-links': NUMBER, '-inum': NUMBER, '-printf': TEXT, '-used': NUMBER,
    },
    risky: { '-exec': 'runs a program', '-execdir': 'runs a program', '-ok': 'runs a program', '-okdir': 'runs a program', '-delete': 'deletes files', '-fprint': 'writes a file', '-fprint0': 'writes a file', '-fprintf': 'writes a file', '-fls': 'writes a file', '-files0-from': 'reads a list of files, which can be anywhere', '-L': 'follows links, which can lead outside the workspace', '-follow': 'follows links, which can lead outside the workspace' },
    operands: 'find',
  },
  echo: { note: 'prints its words', options: flags('-n', '-e', '-E'), operands: 'text', optionsFirst: true, globs: true },
  printf: { note: 'prints formatted words; -v sets a variable, so a glob could become it', risky: { '-v': 'sets a shell variable, such as PATH' }, operands: 'text', optionsFirst: true },
  pwd: { note: 'prints the folder', options: flags('-L', '-P'), operands: 'none', globs: true },
  true: { note: 'does nothing', operands: 'text', optionsFirst: true, globs: true },
  false: { note: 'does nothing, and fails', operands: 'text', optionsFirst: true, globs: true },
  date: {
    note: 'prints the date; an operand other than +FORMAT (or -s) sets the clock',
    options: { ...flags('-u', '--utc', '--universal', '-R', '--rfc-email'), '-d': TEXT, '--date': TEXT, '-r': PATH, '--reference': PATH },
    optionalValue: { '--iso-8601': TEXT, '--rfc-3339': TEXT, '-I': TEXT },
    risky: { '-s': 'sets the system clock', '--set': 'sets the system clock', '-f': 'reads a file of dates, which can be anywhere' },
    operands: 'text',
    operandPattern: /^\+/,
    maxOperands: 1,
  },
  stat: { note: 'prints file details', options: { ...flags('-L', '-f', '-t', '--dereference', '--file-system', '--terse'), '-c': TEXT, '--format': TEXT, '--printf': TEXT }, operands: 'paths', globs: true },
  file: {
    note: 'names file types; -C writes a file, -z and -m are left out',
    options: flags('-b', '-i', '-L', '-h', '-k', '-N', '-E', '-p', '--brief', '--mime', '--mime-type', '--mime-encoding', '--dereference', '--no-dereference', '--keep-going', '--no-pad', '--extension'),
    risky: { '-C': 'writes a compiled magic file', '--compile': 'writes a compiled magic file', '-z': 'looks inside compressed files with other programs', '-Z': 'looks inside compressed files with other programs', '-m': 'reads a magic file, which can be anywhere', '-f': 'reads a list of files, which can be anywhere' },
    operands: 'paths',
  },
  du: { note: 'prints disk usage', options: { ...flags('-s', '-h', '-a', '-c', '-k', '-m', '-x', '-b', '-l', '-S', '--summarize', '--human-readable', '--all', '--total', '--apparent-size', '--one-file-system', '--si', '--bytes', '--separate-dirs'), '-d': NUMBER, '--max-depth': NUMBER, '--exclude': TEXT, '-t': NUMBER, '--threshold': NUMBER, '-B': TEXT, '--block-size': TEXT }, operands: 'paths', globs: true },
  df: { note: 'prints free disk space', options: { ...flags('-h', '-H', '-T', '-i', '-k', '-a', '-l', '-P', '--human-readable', '--si', '--print-type', '--inodes', '--local', '--portability', '--all', '--total'), '-t': TEXT, '-x': TEXT, '--output': TEXT, '-B': TEXT }, operands: 'paths', globs: true },
  basename: { note: 'prints the last part of a name', options: { ...flags('-a', '-z', '--multiple', '--zero'), '-s': TEXT, '--suffix': TEXT }, operands: 'text', globs: true },
  dirname: { note: 'prints the folder part of a name', options: flags('-z', '--zero'), operands: 'text', globs: true },
  realpath: { note: 'prints resolved paths', options: { ...flags('-e', '-m', '-s', '-q', '-z', '-L', '-P', '--canonicalize-existing', '--canonicalize-missing', '--no-symlinks', '--strip', '--quiet', '--zero'), '--relative-to': PATH, '--relative-base': PATH }, operands: 'paths', globs: true },
  readlink: { note: 'prints link targets', options: flags('-f', '-e', '-m', '-n', '-z', '-v', '-q', '-s', '--canonicalize', '--canonicalize-existing', '--canonicalize-missing', '--no-newline', '--zero', '--verbose', '--quiet', '--silent'), operands: 'paths', globs: true },
  which: { note: 'finds programs on PATH', options: flags('-a'), operands: 'text', globs: true },
  type: { note: 'says what a command name is', options: flags('-a', '-t', '-p', '-P', '-f'), operands: 'text', globs: true },
  diff: {
    note: 'compares files; -l pipes through pr, a program, so no globs',
    options: { ...flags('-u', '-c', '-q', '-r', '-N', '-w', '-b', '-B', '-i', '-y', '-a', '-s', '-t', '-T', '-p', '-d', '-E', '-Z', '--unified', '--brief', '--recursive', '--new-file', '--ignore-all-space', '--ignore-space-change', '--ignore-blank-lines', '--ignore-case', '--side-by-side', '--text', '--report-identical-files', '--expand-tabs', '--minimal', '--show-c-function', '--strip-trailing-cr', '--no-dereference', '--suppress-common-lines'), '-U': NUMBER, '-C': NUMBER, '-W': NUMBER, '--width': NUMBER, '-x': TEXT, '--exclude': TEXT, '-I': TEXT, '--ignore-matching-lines': TEXT, '--label': TEXT, '-F': TEXT, '--to-file': PATH, '--from-file': PATH },
    optionalValue: { '--color': COLOR },
    risky: { '-l': 'passes its output through pr, a program it runs', '--paginate': 'passes its output through pr, a program it runs', '-X': 'reads a pattern file, which can be anywhere', '--exclude-from': 'reads a pattern file, which can be anywhere' },
    operands: 'paths',
  },
  cmp: { note: 'compares files byte by byte', options: { ...flags('-b', '-l', '-s', '--print-bytes', '--verbose', '--quiet', '--silent'), '-n': NUMBER, '--bytes': NUMBER, '-i': TEXT, '--ignore-initial': TEXT }, operands: 'paths', globs: true },
  tree: {
    note: 'lists a folder tree; -o writes a file, -R with -H writes one per folder',
    options: { ...flags('-a', '-d', '-f', '-i', '-l', '-h', '-s', '-C', '-n', '-F', '-D', '-J', '-X', '-p', '-u', '-g', '-Q', '-N', '-v', '-t', '-r', '-U', '--noreport', '--dirsfirst', '--gitignore', '--prune', '--du', '--si'), '-L': NUMBER, '-I': TEXT, '-P': TEXT, '--filelimit': NUMBER, '--sort': TEXT, '--charset': TEXT, '--timefmt': TEXT },
    risky: { '-o': 'writes a file', '--output': 'writes a file', '-R': 'writes files with -H', '-H': 'writes HTML, with -R a file per folder', '--fromfile': 'reads a list of names from a file' },
    operands: 'paths',
  },
  jq: {
    note: 'filters JSON; a filter naming env or $ENV prints the environment, import and include read other files',
    options: { ...flags('-r', '-c', '-S', '-e', '-n', '-s', '-j', '-M', '-C', '-a', '-R', '--raw-output', '--compact-output', '--sort-keys', '--exit-status', '--null-input', '--slurp', '--join-output', '--monochrome-output', '--color-output', '--ascii-output', '--raw-input', '--tab', '--seq', '--stream', '-0', '--raw-output0'), '--indent': NUMBER },
    risky: { '--rawfile': 'reads a file into a variable', '--slurpfile': 'reads a file into a variable', '-f': 'reads its filter from a file', '--from-file': 'reads its filter from a file', '-L': 'loads modules from a folder', '--arg': 'takes two values (not read here)', '--argjson': 'takes two values (not read here)', '--args': 'takes its operands as values', '--jsonargs': 'takes its operands as values' },
    operands: 'pattern-paths',
    refuseText: { pattern: /\b(env|ENV|import|include|get_search_list)\b/, reason: 'reads the environment or other files in this filter' },
  },
  ...Object.fromEntries(
    ['sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'md5sum', 'b2sum', 'cksum'].map((name) => [
      name,
      {
        note: 'prints checksums; -c (not listed) reads files named in a list',
        options: flags('-b', '-t', '-z', '--binary', '--text', '--tag', '--zero', '--untagged'),
        risky: { '-c': 'reads the files named in a list, which can be anywhere', '--check': 'reads the files named in a list, which can be anywhere' },
        operands: 'paths',
      } satisfies SafeProgram,
    ]),
  ),
  test: { note: 'tests files and strings', operands: 'text', optionsFirst: true, globs: true },
  '[': { note: 'tests files and strings', operands: 'text', optionsFirst: true, globs: true },
  seq: { note: 'prints numbers', options: { ...flags('-w', '--equal-width'), '-s': TEXT, '--separator': TEXT, '-f': TEXT, '--format': TEXT }, operands: 'text', operandPattern: /^[-+]?[0-9.e]+$/, numericOption: true, globs: true },
  sleep: { note: 'waits', operands: 'text', operandPattern: /^[0-9.]+[smhd]?$/, optionsFirst: true },
  whoami: { note: 'prints the user name', operands: 'none', globs: true },
  id: { note: 'prints user and group ids', options: flags('-u', '-g', '-G', '-n', '-r', '-z', '--user', '--group', '--groups', '--name', '--real'), operands: 'text', globs: true },
  groups: { note: 'prints groups', operands: 'text', globs: true },
  uname: { note: 'prints the system name', options: flags('-a', '-s', '-n', '-r', '-v', '-m', '-p', '-i', '-o', '--all', '--kernel-name', '--kernel-release', '--machine', '--operating-system'), operands: 'none', globs: true },
  hostname: { note: 'prints the host name; an operand sets it', options: flags('-f', '-s', '-d', '-i', '-I', '--fqdn', '--short', '--domain', '--ip-address', '--all-ip-addresses'), risky: { '-F': 'sets the host name from a file', '--file': 'sets the host name from a file', '-b': 'sets the host name' }, operands: 'none' },
  arch: { note: 'prints the machine type', operands: 'none', globs: true },
  nproc: { note: 'prints the number of processors', options: flags('--all'), operands: 'none' },
  cd: { note: 'changes the shell folder, inside the workspace only; later relative paths follow it', options: flags('-L', '-P'), operands: 'paths', minOperands: 1, maxOperands: 1, changesFolder: true },
  git: {
    note: 'only read-only subcommands, run in the workspace folder itself; -c, --git-dir, --work-tree, --exec-path and -C are left out',
    options: flags('--no-pager', '-P', '--no-optional-locks', '--literal-pathspecs', '--no-replace-objects'),
    risky: {
      '-c': 'sets configuration, which can name programs to run',
      '--config-env': 'sets configuration, which can name programs to run',
      '--git-dir': 'uses another repository, whose configuration can name programs to run',
      '--work-tree': 'uses another working tree',
      '--exec-path': 'changes where git finds the programs it runs',
      '-C': 'runs git in another folder, whose repository configuration can name programs to run',
      '--namespace': 'changes the references it sees',
      '-p': 'runs a pager',
      '--paginate': 'runs a pager',
    },
    operands: 'none',
    optionsFirst: true,
    subcommands: GIT_SUBCOMMANDS,
    root: true,
  },
  // Wrappers that only time, slow or bound the command they run, which is checked on its own.
  time: { note: 'times the command it runs (bash reads -p); -o writes a file', options: flags('-p'), risky: { '-o': 'writes a file', '--output': 'writes a file' }, operands: 'none', optionsFirst: true, wrapper: { leading: 0 } },
  nice: { note: 'runs a command at a lower priority', options: { '-n': NUMBER, '--adjustment': NUMBER }, operands: 'none', optionsFirst: true, wrapper: { leading: 0 } },
  timeout: { note: 'runs a command for at most a duration', options: { ...flags('--preserve-status', '--foreground', '-v', '--verbose'), '-s': TEXT, '--signal': TEXT, '-k': TEXT, '--kill-after': TEXT }, operands: 'none', optionsFirst: true, wrapper: { leading: 1, leadingPattern: /^[0-9.]+[smhd]?$/ } },
  command: { note: 'runs a program and not a function of the same name; -v is left out (use type)', options: flags('-p'), risky: { '-v': 'is not needed: use type', '-V': 'is not needed: use type' }, operands: 'none', optionsFirst: true, wrapper: { leading: 0 } },
}

/**
 * Options with which a program of the list reads through the links inside the folders it
 * is given (`diff -r` compares what a link in them leads to; `tree -l` lists it): run
 * without a sandbox, those folders are walked for a link that leads outside first.
 */
export const READS_THROUGH_LINKS_IN_FOLDERS: Readonly<Record<string, readonly string[]>> = {
  diff: ['-r', '--recursive'],
  tree: ['-l'],
}

/** Programs one might expect on the list, and why they are not: the reason given for them. */
export const NEVER_SAFE: Readonly<Record<string, string>> = {
  env: 'env runs a command with other variables, or prints the environment, which can hold secrets',
  printenv: 'printenv prints the environment, which can hold secrets',
  xargs: 'xargs runs commands built from its input, which is not known here',
  sudo: 'sudo runs a command as root',
  exec: 'exec replaces the shell with a command',
  eval: 'eval runs a string as shell code',
  sh: 'sh runs shell code', bash: 'bash runs shell code', zsh: 'zsh runs shell code', dash: 'dash runs shell code',
  source: 'source runs a file as shell code',
  '.': '. runs a file as shell code',
  make: 'make runs the recipes of a Makefile, which can run anything',
  cmake: 'cmake runs build scripts and commands',
  cargo: 'cargo runs build scripts, tests and configured runners',
  go: 'go runs build tools and test binaries, and can download modules',
  npm: 'npm runs package scripts', npx: 'npx downloads and runs a package', node: 'node runs JavaScript',
  python: 'python runs Python code', python3: 'python3 runs Python code', pip: 'pip runs package code and reaches the network',
  pytest: 'pytest runs test code', awk: 'awk can run commands and write files', sed: 'sed can write files and run commands',
  less: 'less can run commands and reads its configuration from files', more: 'more can run commands', man: 'man runs formatters and a pager',
  tar: 'tar writes files and can run programs', xxd: 'xxd writes its second operand',
  watch: 'watch runs a shell command', nohup: 'nohup keeps a command running and writes nohup.out',
  ps: 'ps can print the environments of other processes',
}
