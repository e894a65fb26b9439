/**
 * The shell tool's risk classifier (SPEC §3.8): rates a command string low, medium or
 * high, so that supervised sessions ask before anything that changes files, reaches the
 * network, gains privileges or runs code that cannot be read here.
 *
 * The string is parsed (./shell-parse.ts) and every simple command in it is rated,
 * including those in substitutions, subshells, function bodies and the scripts of
 * `sh -c`, `find -exec`, `xargs`, `watch`, `trap`, `eval` and `alias`; the highest rating
 * wins. Each command is looked through its wrappers (`sudo env timeout 5 rm` is rm) and
 * its path (`/bin/rm` is rm) first. The rules are tables, so they read as the policy:
 * HIGH, MEDIUM, READ_ONLY, SHELL_STATE and RUNNERS for plain programs, WRAPPERS for
 * programs that run another one, OPTION_RULES for programs that only read unless an
 * option writes a file or runs a program (`sort -o`, `rg --pre`), and small functions in
 * TOOLS for the programs whose subcommand, options or script decide (git, sed, tar…).
 * Redirections and assignments count too: writing into the workspace is medium, outside
 * it (or into `.git`) high, and after a `cd` out of the workspace every relative write is
 * outside. Setting a variable that changes which program runs (PATH, GIT_CONFIG_*…) is
 * medium by any syntax (`read`, `for`, `export`, `printf -v`, arithmetic). Naming where
 * keys live, or another process's `/proc` files, is high. A redirection with no program
 * (`{ …; } > f`) is rated but not listed in `commands`, which name programs only.
 *
 * Low is a positive list (issue 17): a command is low only when every simple command in
 * it is a known read-only program used in a known read-only way, with literal words,
 * paths inside the workspace and harmless redirections (the table is ./known-safe.ts,
 * applied by ./risk/known-safe-check.ts), and the rules here find nothing more. Anything
 * else is at least medium; the rules here still decide what is high.
 *
 * It errs towards the higher rating: a program it does not know is medium, a command
 * name or subcommand that is only known when it runs (`$CMD`, `$(…)`, `{a,b}`, a glob)
 * is high, an argument only known when it runs where an option of a program with risky
 * options could be is medium, and anything it cannot parse is high. It does not follow
 * values through variables or files (`x='rm y'; $x` is high only because `$x` is
 * dynamic).
 */
import path from 'node:path'

import { cut, type Where, whyNotKnownSafe } from './risk/known-safe-check.js'
import { arithmeticAssignments, type ParseResult, parseShell, type Redirect, type SimpleCommand } from './shell-parse.js'

export type { Where } from './risk/known-safe-check.js'

export type Risk = 'low' | 'medium' | 'high'

export interface RatedCommand {
  /** The program that runs, after wrappers and paths: `sudo /bin/rm x` is `rm`; '' when not a literal. */
  name: string
  /** The wrappers it runs under, outermost first, e.g. `['sudo', 'env']`. */
  wrappers: string[]
  /** The words of the program's own command line, its name first. */
  argv: string[]
  risk: Risk
  /** Why, in a few words for the model: "rm deletes files". */
  reason: string
}

export interface Classification {
  /** The highest rating of any command (or redirection) in the input. */
  risk: Risk
  commands: RatedCommand[]
  /** The reason of the highest-rated command, or why the input could not be parsed. */
  reason: string
  parseError?: string
}

/**
 * Rates a shell command string; never throws. `where` is the folder it runs in, against
 * which its relative paths resolve, and the other folders it may read; without it only
 * relative paths that stay inside count as inside.
 */
export function classifyCommand(command: string, where?: Where): Classification {
  const parsed = parseShell(command)
  const rated = rateParsed(command, parsed)
  if (rated.risk === 'high') return rated
  const unsafe = whyNotKnownSafe(command, parsed, where)
  // Low needs both: the known-safe list, and no rule here finding more.
  if (unsafe === undefined) return rated
  const flagged = unsafe.words && rated.commands.find((c) => c.risk === 'low' && endsWith(unsafe.words!, c.argv))
  if (flagged) Object.assign(flagged, { risk: 'medium', reason: unsafe.reason })
  return rated.risk === 'medium' ? rated : { ...rated, risk: 'medium', reason: unsafe.reason }
}

/** Whether `words` ends with `tail` (a wrapped command's own words). */
function endsWith(words: readonly string[], tail: readonly string[]): boolean {
  return tail.length <= words.length && tail.every((w, i) => words[words.length - tail.length + i] === w)
}

/** The rules of this file alone: what is high, and what is at least medium. */
function rateParsed(command: string, parsed: ParseResult): Classification {
  let ctx = newContext(false)
  let error = rateScript(command, ctx, parsed)
  // A `cd` out of the workspace anywhere (a loop or a function can run it before a write
  // that comes earlier in the text): rate again, with every relative write outside.
  if (ctx.leftWorkspace) {
    ctx = newContext(true)
    error = rateScript(command, ctx, parsed)
  }
  if (error !== undefined) {
    return { risk: 'high', commands: ctx.commands, reason: `the command could not be parsed: ${error}`, parseError: error }
  }
  const all = [...ctx.commands, ...ctx.loose]
  if (all.length === 0) return { risk: 'low', commands: [], reason: 'it runs no program' }
  const top = highest(all)
  return { risk: top.risk, commands: ctx.commands, reason: cut(top.reason, 200) }
}

// ---- ratings ---------------------------------------------------------------------

interface Verdict {
  risk: Risk
  reason: string
}

const low = (reason: string): Verdict => ({ risk: 'low', reason })
const medium = (reason: string): Verdict => ({ risk: 'medium', reason })
const high = (reason: string): Verdict => ({ risk: 'high', reason })
const RANK: Record<Risk, number> = { low: 0, medium: 1, high: 2 }

/** The first of the highest-rated verdicts. */
function highest<T extends Verdict>(verdicts: readonly T[]): T {
  return verdicts.reduce((top, v) => (RANK[v.risk] > RANK[top.risk] ? v : top))
}

/** `table[key]` for the table's own keys only: names come from the input, and `constructor` must not find Object's. */
function lookup<T>(table: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined
}

/** The highest of `verdicts`, or `fallback` when there are none. */
function worst(fallback: Verdict, ...verdicts: (Verdict | undefined)[]): Verdict {
  return highest([fallback, ...verdicts.filter((v) => v !== undefined)])
}

// ---- plain programs --------------------------------------------------------------

/** Programs that delete, overwrite, administer the system, gain privileges or reach the network. */
const HIGH: Record<string, string> = {
  rm: 'rm deletes files',
  rmdir: 'rmdir deletes folders',
  shred: 'shred destroys file contents',
  srm: 'srm destroys files',
  wipefs: 'wipefs erases disk signatures',
  dd: 'dd writes raw data to files and disks',
  truncate: 'truncate cuts files short',
  mkfs: 'mkfs formats a disk',
  mkswap: 'mkswap formats a disk as swap',
  fdisk: 'fdisk changes disk partitions',
  sfdisk: 'sfdisk changes disk partitions',
  cfdisk: 'cfdisk changes disk partitions',
  gdisk: 'gdisk changes disk partitions',
  sgdisk: 'sgdisk changes disk partitions',
  parted: 'parted changes disk partitions',
  diskutil: 'diskutil manages disks',
  blkdiscard: 'blkdiscard erases a disk',
  losetup: 'losetup attaches disk images',
  cryptsetup: 'cryptsetup manages encrypted disks',
  mount: 'mount changes mounted file systems',
  umount: 'umount changes mounted file systems',
  swapon: 'swapon changes swap space',
  swapoff: 'swapoff changes swap space',
  shutdown: 'shutdown stops the machine',
  reboot: 'reboot restarts the machine',
  halt: 'halt stops the machine',
  poweroff: 'poweroff stops the machine',
  init: 'init changes the run level',
  telinit: 'telinit changes the run level',
  insmod: 'insmod loads a kernel module',
  rmmod: 'rmmod unloads a kernel module',
  modprobe: 'modprobe loads kernel modules',
  chroot: 'chroot runs a command as root in another root folder',
  pkill: 'pkill stops processes',
  killall: 'killall stops processes',
  su: 'su runs commands as another user',
  runuser: 'runuser runs commands as another user',
  sg: 'sg runs commands as another group',
  sudoedit: 'sudoedit edits files as root',
  chown: 'chown changes file owners',
  chmod: 'chmod changes file permissions',
  chgrp: 'chgrp changes file groups',
  chattr: 'chattr changes file attributes',
  setfacl: 'setfacl changes file permissions',
  setcap: 'setcap gives programs privileges',
  useradd: 'useradd changes user accounts',
  userdel: 'userdel deletes a user account',
  usermod: 'usermod changes user accounts',
  adduser: 'adduser changes user accounts',
  deluser: 'deluser deletes a user account',
  groupadd: 'groupadd changes groups',
  groupdel: 'groupdel deletes a group',
  groupmod: 'groupmod changes groups',
  passwd: 'passwd changes passwords',
  chpasswd: 'chpasswd changes passwords',
  chsh: 'chsh changes a login shell',
  visudo: 'visudo changes who may use sudo',
  vipw: 'vipw changes user accounts',
  at: 'at schedules a command to run later',
  batch: 'batch schedules a command to run later',
  'systemd-run': 'systemd-run runs a command as a service, outside the call',
  daemon: 'daemon runs a command in the background, outside the call',
  'start-stop-daemon': 'start-stop-daemon starts and stops background services',
  iptables: 'iptables changes the firewall',
  ip6tables: 'ip6tables changes the firewall',
  'iptables-restore': 'iptables-restore changes the firewall',
  nft: 'nft changes the firewall',
  ufw: 'ufw changes the firewall',
  'firewall-cmd': 'firewall-cmd changes the firewall',
  pfctl: 'pfctl changes the firewall',
  security: 'security reads and changes the keychain',
  curl: 'curl reaches the network',
  wget: 'wget reaches the network',
  aria2c: 'aria2c reaches the network',
  nc: 'nc reaches the network',
  ncat: 'ncat reaches the network',
  netcat: 'netcat reaches the network',
  socat: 'socat reaches the network',
  telnet: 'telnet reaches the network',
  ftp: 'ftp reaches the network',
  lftp: 'lftp reaches the network',
  ssh: 'ssh runs commands on another machine',
  scp: 'scp copies files to or from another machine',
  sftp: 'sftp copies files to or from another machine',
  'ssh-copy-id': 'ssh-copy-id installs keys on another machine',
  ping: 'ping reaches the network',
  ping6: 'ping6 reaches the network',
  traceroute: 'traceroute reaches the network',
  tracepath: 'tracepath reaches the network',
  mtr: 'mtr reaches the network',
  nmap: 'nmap scans the network',
  dig: 'dig queries DNS servers, which can carry data out',
  nslookup: 'nslookup queries DNS servers, which can carry data out',
  host: 'host queries DNS servers, which can carry data out',
  whois: 'whois reaches the network',
  source: 'source runs a file as shell code',
  '.': '. runs a file as shell code',
}

/** Programs that create, move or change files, or run code that is not shown here. */
const MEDIUM: Record<string, string> = {
  touch: 'touch creates or changes files',
  mkdir: 'mkdir creates folders',
  mv: 'mv moves or renames files',
  cp: 'cp copies files and can overwrite them',
  ln: 'ln creates links',
  install: 'install copies files',
  mkfifo: 'mkfifo creates files',
  mknod: 'mknod creates device files',
  patch: 'patch changes files',
  '7z': '7z writes or extracts archives',
  unrar: 'unrar extracts files',
  npx: 'npx downloads and runs a package',
  pnpx: 'pnpx downloads and runs a package',
  bunx: 'bunx downloads and runs a package',
  uvx: 'uvx downloads and runs a package',
  pipx: 'pipx installs and runs packages',
  open: 'open opens files or programs',
  'xdg-open': 'xdg-open opens files or programs',
  disown: 'disown lets a background job outlive the shell',
  tmux: 'tmux starts a session that outlives the call and runs commands',
  screen: 'screen starts a session that outlives the call and runs commands',
  vi: 'vi edits files and can run commands',
  vim: 'vim edits files and can run commands',
  nvim: 'nvim edits files and can run commands',
  view: 'view can write files and run commands',
  ex: 'ex edits files and can run commands',
  ed: 'ed edits files and can run commands',
  emacs: 'emacs edits files and can run commands',
  nano: 'nano edits files',
}

/** Commands that only read or print. */
const READ_ONLY = new Set([
  'ls', 'dir', 'vdir', 'cat', 'tac', 'nl', 'head', 'tail', 'less', 'more', 'wc', 'grep', 'egrep',
  'fgrep', 'rg', 'ag', 'ack', 'fd', 'fdfind', 'tree', 'stat', 'file', 'du', 'df', 'pwd', 'echo',
  'printf', 'cal', 'whoami', 'id', 'groups', 'uname', 'which', 'whereis', 'type', 'true', 'false',
  'test', '[', 'uniq', 'cut', 'tr', 'diff', 'cmp', 'comm', 'jq', 'basename', 'dirname',
  'realpath', 'readlink', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'md5sum',
  'b2sum', 'cksum', 'sum', 'shasum', 'md5', 'xxd', 'od', 'hexdump', 'hd', 'strings', 'seq',
  'sleep', 'expr', 'ps', 'pgrep', 'pstree', 'top', 'free', 'uptime', 'nproc', 'lsof', 'lscpu',
  'lsblk', 'lsusb', 'lspci', 'vmstat', 'iostat', 'w', 'who', 'column', 'fold', 'fmt', 'paste',
  'join', 'expand', 'unexpand', 'rev', 'shuf', 'numfmt', 'factor', 'yes', 'base64', 'base32',
  'tput', 'clear', 'locale', 'getconf', 'arch', 'tty', 'logname', 'users', 'namei', 'printenv',
  'zcat', 'bzcat', 'xzcat', 'zstdcat', 'zless', 'zgrep', 'ss', 'netstat', 'man', 'apt-cache',
])

/** Shell builtins that change only the shell's own state. */
const SHELL_STATE = new Set([
  'cd', 'pushd', 'popd', 'dirs', 'set', 'unset', 'shift', 'return', 'exit', 'break', 'continue',
  'wait', 'read', 'mapfile', 'readarray', ':', 'umask', 'ulimit', 'getopts', 'let', 'jobs', 'fg',
  'bg', 'times', 'unalias', 'shopt',
])

/** Build and test runners: low, like Revka's default, so `cargo test` runs unasked (SPEC §3.8). */
const RUNNERS = new Set([
  'make', 'cmake', 'ninja', 'pytest', 'tsc', 'vitest', 'jest', 'mocha', 'mypy', 'pyright',
  'pylint', 'flake8', 'shellcheck',
])

/** Where an absolute program path is trusted to be the program its name says. */
const TRUSTED_DIRS = ['/bin/', '/usr/bin/', '/usr/local/bin/', '/sbin/', '/usr/sbin/', '/usr/local/sbin/', '/opt/homebrew/bin/', 'node_modules/.bin/', './node_modules/.bin/']

/** Variables that change which program runs or what code it loads. */
const CODE_VARIABLES = new Set([
  'PATH', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'IFS', 'NODE_OPTIONS',
  'NODE_PATH', 'PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONHOME', 'PERL5OPT', 'PERL5LIB', 'PERLLIB',
  'RUBYOPT', 'RUBYLIB', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_EXEC_PATH', 'GIT_EDITOR', 'GIT_PAGER',
  'GIT_ASKPASS', 'GIT_EXTERNAL_DIFF', 'GIT_PROXY_COMMAND', 'GIT_DIR', 'GIT_WORK_TREE',
  'SSH_ASKPASS', 'EDITOR', 'VISUAL', 'PAGER', 'MANPAGER', 'LESSOPEN', 'LESSCLOSE', 'BROWSER',
  'RUSTC_WRAPPER', 'RUSTC', 'CC', 'CXX', 'MAKEFLAGS', 'JAVA_TOOL_OPTIONS', 'NPM_CONFIG_SCRIPT_SHELL',
  // Where git, shells and tools find their configuration, which names programs to run.
  'HOME', 'XDG_CONFIG_HOME', 'ZDOTDIR', 'GIT_TEMPLATE_DIR', 'GIT_SEQUENCE_EDITOR', 'SHELL',
  // Options and configuration files of programs rated by their options here.
  'TAR_OPTIONS', 'MANOPT', 'RIPGREP_CONFIG_PATH', 'RUSTFLAGS', 'RUSTDOCFLAGS', 'CARGO_ENCODED_RUSTFLAGS', 'MAKEFILES',
  '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'GCONV_PATH', 'TEXTDOMAIN', 'TEXTDOMAINDIR',
])
const CODE_VARIABLE_PREFIXES = ['LD_', 'DYLD_', 'GIT_CONFIG', 'NPM_CONFIG_', 'npm_config_', 'CARGO_TARGET_', 'CARGO_BUILD_']

// ---- the walk --------------------------------------------------------------------

interface Context {
  commands: RatedCommand[]
  /** Ratings that belong to no program: a redirection after `{ …; }`, a bare assignment. */
  loose: Verdict[]
  /** How deep in scripts-within-commands (`sh -c`, `find -exec`) the walk is. */
  depth: number
  /** The script changes folder to one that may be outside the workspace (`cd /etc`, `cd ..`, `cd "$d"`). */
  leftWorkspace: boolean
  /** Rate relative paths as outside the workspace (the second pass, after such a `cd`). */
  outside: boolean
}

function newContext(outside: boolean): Context {
  return { commands: [], loose: [], depth: 0, leftWorkspace: false, outside }
}

/** A word of a command line. */
interface Arg {
  text: string
  dynamic: boolean
  glob: boolean
}

/** Deeper than this, a nested script or command is not followed, and rated high. */
const MAX_NESTING = 8
/** More wrappers than this around one command are rated high instead of unwrapped one by one. */
const MAX_WRAPPERS = 16

/** Parses `script` and rates its commands into `ctx`; returns the parse error, if any. */
function rateScript(script: string, ctx: Context, parsed: ParseResult = parseShell(script)): string | undefined {
  for (const cmd of parsed.commands) rateSimple(cmd, ctx)
  return parsed.error
}

function rateSimple(cmd: SimpleCommand, ctx: Context): void {
  const side: Verdict[] = cmd.redirects.map((r) => rateRedirect(r, ctx))
  for (const a of cmd.assignments) {
    const v = rateAssignment(a, ctx)
    if (v) side.push(v)
  }
  if (cmd.words.length === 0) {
    ctx.loose.push(...side)
    return
  }
  const args = cmd.words.map((text, i) => ({ text, dynamic: cmd.dynamic[i]!, glob: cmd.glob[i]! }))
  rateArgv(args, ctx, side, [], cmd.redirects)
  const rated = ctx.commands[ctx.commands.length - 1]!
  if (cmd.dashOnly && rated.risk !== 'low') rated.reason += ' (as dash reads it: dash reads this bash syntax as other commands)'
}

/** Rates one command line (after its wrappers) and records it in `ctx.commands`. */
function rateArgv(args: Arg[], ctx: Context, side: Verdict[], wrappers: string[], redirects: readonly Redirect[]): void {
  const extra: Verdict[] = []
  let main: Verdict | undefined
  let name = ''
  let argv = args
  while (main === undefined) {
    const head = argv[0]!
    if (head.dynamic || head.glob) {
      main = high(`the program name \`${head.text}\` is only known when the command runs`)
      break
    }
    name = path.posix.basename(head.text).toLowerCase()
    // `./ls` may be any program: a path outside the system's folders is at least medium.
    const byPath = head.text.includes('/') && !TRUSTED_DIRS.some((dir) => head.text.startsWith(dir) && !head.text.includes('..'))
    if (byPath) extra.push(medium(`${head.text} runs a program or script by its path`))
    const wrapper = lookup(WRAPPERS, name)
    if (wrapper && wrappers.length >= MAX_WRAPPERS) {
      main = high(`the command has more than ${MAX_WRAPPERS} wrappers`)
      break
    }
    if (!wrapper) {
      main = rateProgram(name, argv, ctx, redirects, byPath)
      break
    }
    const inner = unwrap(wrapper, argv.slice(1), ctx, extra)
    if ('argv' in inner && inner.argv.length > 0) {
      wrappers.push(name)
      if (wrapper.own) extra.push(wrapper.own)
      argv = inner.argv
    } else {
      // Nothing wrapped (`env`, `command -v x`, `watch 'script'`): the wrapper is the program.
      main = 'argv' in inner ? wrapper.alone : inner.done
      if (wrapper.own) extra.push(wrapper.own)
    }
  }
  const secret = [...argv.slice(1).map((a) => a.text), ...redirects.map((r) => r.target)].find(touchesCredentials)
  if (secret !== undefined) extra.push(high(`${secret} holds credentials`))
  const peek = [...argv.slice(1), ...redirects.map((r) => ({ text: r.target, dynamic: r.dynamic, glob: false }))].find(readsOtherProcess)
  if (peek !== undefined) extra.push(high(`${peek.text} reads another process's memory, environment or files`))
  const top = worst(main, ...extra, ...side)
  ctx.commands.push({ name: argv[0]!.dynamic || argv[0]!.glob ? '' : name, wrappers, argv: argv.map((a) => a.text), risk: top.risk, reason: top.reason })
}

/** Rates a script a command runs (`sh -c`, `watch`, `trap`); its commands are rated on their own. */
function rateNestedScript(script: Arg, ctx: Context, what: string): Verdict {
  if (script.dynamic) return high(`${what} runs a script that is only known when the command runs`)
  if (ctx.depth >= MAX_NESTING) return high(`${what} nests scripts too deeply to check`)
  ctx.depth++
  const error = rateScript(script.text, ctx)
  ctx.depth--
  return error === undefined ? low(`${what} runs a script whose commands are rated on their own`) : high(`the script of ${what} could not be parsed: ${error}`)
}

/** Rates a command line a command runs (`find -exec`, `git bisect run`). */
function rateNestedArgv(argv: Arg[], ctx: Context, wrapper: string): Verdict | undefined {
  if (argv.length === 0) return undefined
  if (ctx.depth >= MAX_NESTING) return high(`${wrapper} nests commands too deeply to check`)
  ctx.depth++
  rateArgv(argv, ctx, [], [wrapper], [])
  ctx.depth--
  return undefined
}

// ---- wrappers --------------------------------------------------------------------

interface WrapperSpec {
  /** Short options that take a value, as letters: 'u' for `sudo -u root`. */
  valued?: string
  /** Short options whose value, if any, is attached (`xargs -i{}`). */
  attached?: string
  /** Long options that take the next word as their value. */
  long?: string[]
  /** Words between the options and the command: timeout's duration, chrt's priority. */
  operands?: number
  /** NAME=value words may come before the command. */
  assignments?: boolean
  /** Options after which there is no command to run, with the rating of the whole. */
  noCommand?: Record<string, Verdict>
  /** A lone `-` is an option (env's `-` is `-i`). */
  dash?: boolean
  /** Options that raise the rating. */
  flagged?: Record<string, Verdict>
  /** An option whose value is a command line to split into words (`env -S`). */
  split?: string[]
  /** The rest is one script for `sh -c` (`watch`) unless one of these options is given. */
  joinsUnless?: string[]
  /** After the operands, these options take a script for `sh -c` (`flock file -c 'cmd'`). */
  scriptOptions?: string[]
  /** Options whose value is a file it writes (`time -o file`). */
  writes?: string[]
  /** Options whose value is the folder the command runs in (`env -C dir`). */
  chdir?: string[]
  /** Its operand is a file it creates (flock's lock file). */
  createsOperand?: boolean
  /** The wrapper's own rating, which counts as well. */
  own?: Verdict
  /** The rating when no command follows. */
  alone: Verdict
}

/** Programs that run another program: the rating is the wrapped program's (and the wrapper's own). */
const WRAPPERS: Record<string, WrapperSpec> = {
  env: {
    valued: 'uCSP',
    long: ['--unset', '--chdir', '--split-string'],
    assignments: true,
    dash: true,
    split: ['-S', '--split-string'],
    chdir: ['-C', '--chdir'],
    flagged: { '-P': medium('env -P changes where the program is looked up') },
    alone: low('env prints the environment'),
  },
  sudo: {
    valued: 'ugpCDrtUTR',
    long: ['--user', '--group', '--prompt', '--close-from', '--chdir', '--role', '--type', '--other-user', '--command-timeout', '--host', '--chroot'],
    assignments: true,
    noCommand: { '-e': high('sudo -e edits files as root'), '--edit': high('sudo -e edits files as root') },
    chdir: ['-D', '--chdir'],
    own: high('sudo runs the command as root'),
    alone: high('sudo runs a shell as root'),
  },
  doas: { valued: 'uC', own: high('doas runs the command as root'), alone: high('doas runs a shell as root') },
  pkexec: { long: ['--user'], own: high('pkexec runs the command as root'), alone: high('pkexec runs a shell as root') },
  timeout: { valued: 'sk', long: ['--signal', '--kill-after'], operands: 1, alone: low('timeout with no command does nothing') },
  nice: { valued: 'n', long: ['--adjustment'], alone: low('nice prints the scheduling priority') },
  ionice: {
    valued: 'cn',
    long: ['--class', '--classdata'],
    noCommand: { '-p': medium('ionice -p changes a running process'), '-P': medium('ionice -P changes running processes'), '-u': medium('ionice -u changes running processes') },
    alone: low('ionice prints the I/O priority'),
  },
  chrt: {
    valued: 'TPD',
    long: ['--sched-runtime', '--sched-period', '--sched-deadline'],
    operands: 1,
    noCommand: { '-p': medium('chrt -p changes a running process'), '--pid': medium('chrt -p changes a running process'), '-m': low('chrt -m lists priorities') },
    alone: low('chrt with no command prints help'),
  },
  taskset: { operands: 1, noCommand: { '-p': medium('taskset -p changes a running process'), '--pid': medium('taskset -p changes a running process') }, alone: low('taskset with no command prints help') },
  nohup: { own: medium('nohup keeps the command running after the shell ends'), alone: low('nohup with no command does nothing') },
  time: { valued: 'fo', long: ['--format', '--output', '--append'], writes: ['-o', '--output'], alone: low('time with no command does nothing') },
  stdbuf: { valued: 'ioe', long: ['--input', '--output', '--error'], alone: low('stdbuf with no command does nothing') },
  setsid: { own: medium('setsid starts a process that outlives the call'), alone: low('setsid with no command does nothing') },
  unbuffer: { alone: low('unbuffer with no command does nothing') },
  flock: { valued: 'wE', long: ['--timeout', '--wait', '--conflict-exit-code'], operands: 1, createsOperand: true, scriptOptions: ['-c', '--command'], alone: low('flock only takes a lock') },
  watch: { valued: 'nq', long: ['--interval', '--equexit'], joinsUnless: ['-x', '--exec'], alone: low('watch with no command prints help') },
  xargs: {
    valued: 'ILnPsEda',
    attached: 'ile',
    long: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--max-lines', '--process-slot-var'],
    alone: low('xargs with no command runs echo'),
  },
  command: { noCommand: { '-v': low('command -v only looks a program up'), '-V': low('command -V only looks a program up') }, alone: low('command with no program does nothing') },
  builtin: { alone: low('builtin with no command does nothing') },
  exec: { valued: 'a', alone: low('exec with no command only applies its redirections') },
  busybox: { noCommand: { '--list': low('busybox --list lists its programs'), '--install': medium('busybox --install creates links') }, alone: low('busybox lists its programs') },
}

type Unwrapped = { argv: Arg[] } | { done: Verdict }

/** Skips a wrapper's options and operands to the command it runs. */
function unwrap(spec: WrapperSpec, args: Arg[], ctx: Context, extra: Verdict[]): Unwrapped {
  let i = 0
  let joins = spec.joinsUnless !== undefined
  // A short option's value is the rest of its cluster (`-uroot`) or the next word.
  const valueAfter = (j: number, arg: Arg) => (j + 1 < arg.text.length ? { ...arg, text: arg.text.slice(j + 1) } : args[++i])
  /** What an option's value does, besides being skipped. */
  const onValue = (flag: string, value: Arg | undefined) => {
    if (!value) return
    if (spec.writes?.includes(flag)) extra.push(writeTarget(value, `${flag} writes`, ctx))
    if (spec.chdir?.includes(flag) && leavesWorkspace(value)) ctx.leftWorkspace = true
  }
  const longNames = [...(spec.split ?? []), ...Object.keys(spec.noCommand ?? {}), ...(spec.long ?? []), ...Object.keys(spec.flagged ?? {}), ...(spec.joinsUnless ?? [])].filter((n) => n.startsWith('--'))
  for (; i < args.length; i++) {
    const arg = args[i]!
    const t = arg.text
    if (t === '--') {
      i++
      break
    }
    if (t === '-' && spec.dash) continue
    if (arg.dynamic || !t.startsWith('-') || t === '-') break
    // GNU getopt takes any unambiguous prefix of a long option: `env --split-s='rm x'`.
    const given = t.startsWith('--') ? t.split('=', 1)[0]! : undefined
    const key = given && (longNames.includes(given) ? given : given.length > 2 ? (longNames.find((n) => n.startsWith(given)) ?? given) : given)
    const letters = key ? [key] : [...t.slice(1)].map((c) => '-' + c)
    for (const [j, flag] of letters.entries()) {
      const done = spec.noCommand?.[flag]
      if (done) return { done }
      const raised = spec.flagged?.[flag]
      if (raised) extra.push(raised)
      if (spec.joinsUnless?.includes(flag)) joins = false
      if (key) {
        const value = t.includes('=') ? { text: t.slice(given!.length + 1), dynamic: arg.dynamic, glob: false } : spec.long?.includes(key) ? args[++i] : undefined
        if (value && spec.split?.includes(key)) return splitInto(value, args.slice(i + 1), ctx)
        onValue(key, value)
        break
      }
      const letter = flag[1]!
      if (spec.attached?.includes(letter)) break
      if (spec.valued?.includes(letter)) {
        const value = valueAfter(j + 1, arg)
        if (value && spec.split?.includes(flag)) return splitInto(value, args.slice(i + 1), ctx)
        onValue(flag, value)
        break
      }
    }
  }
  const operands = args.slice(i, i + Math.min(spec.operands ?? 0, args.length - i))
  if (spec.createsOperand) for (const file of operands) extra.push(writeTarget(file, 'creates', ctx))
  i += operands.length
  if (spec.assignments) {
    for (; i < args.length && !args[i]!.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!.text); i++) {
      const v = rateAssignment(args[i]!.text, ctx)
      if (v) extra.push(v)
    }
  }
  const rest = args.slice(i)
  const scriptAt = spec.scriptOptions?.includes(rest[0]?.text ?? '') ? rest[1] : undefined
  if (scriptAt) return { done: rateNestedScript(scriptAt, ctx, rest[0]!.text) }
  if (joins && rest.length > 0) {
    // watch runs its words joined with spaces through `sh -c`.
    const script = { text: rest.map((a) => a.text).join(' '), dynamic: rest.some((a) => a.dynamic), glob: false }
    return { done: rateNestedScript(script, ctx, 'watch') }
  }
  return { argv: rest }
}

/** `env -S 'cmd args'`: env splits the string into words itself. */
function splitInto(value: Arg, rest: Arg[], ctx: Context): Unwrapped {
  const parsed = value.dynamic || ctx.depth >= MAX_NESTING ? undefined : parseShell(value.text)
  const only = parsed?.commands[0]
  if (!parsed || parsed.error !== undefined || parsed.commands.length !== 1 || only!.redirects.length + only!.assignments.length > 0) {
    return { done: high('env -S runs a command line that cannot be checked') }
  }
  const words = only!.words.map((text, i) => ({ text, dynamic: only!.dynamic[i]!, glob: only!.glob[i]! }))
  return { argv: [...words, ...rest] }
}

// ---- redirections and assignments -----------------------------------------------

/**
 * Where keys and tokens live (the folders ts/policy/protected.ts never writes): any
 * command that names one is high, reading included, since what is read can be sent on.
 */
const CREDENTIAL_PARTS = [
  ['.ssh'],
  ['.gnupg'],
  ['.aws'],
  ['.azure'],
  ['.kube'],
  ['.docker', 'config.json'],
  ['.config', 'gcloud'],
  ['.config', 'gh'],
  ['.password-store'],
  ['.netrc'],
  ['.npmrc'],
  ['.pypirc'],
  ['.git-credentials'],
  ['.vault-token'],
  ['etc', 'shadow'],
  ['etc', 'sudoers'],
]
const KEY_FILE = /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/

function touchesCredentials(word: string): boolean {
  const parts = word.toLowerCase().split(/[/=:@]+/).filter(Boolean)
  if (parts.some((p) => KEY_FILE.test(p))) return true
  return CREDENTIAL_PARTS.some((seq) => parts.some((_, i) => seq.every((s, j) => parts[i + j] === s)))
}

/**
 * `/proc/<pid>/…` of a process other than the command's own: `/proc/1/environ`,
 * `/proc/$PPID/mem`, or a glob whose pid part may match one. That is another process's
 * environment, memory or open files, such as the host's own variables (the command's
 * environment is cleared, its parent's is not). `/proc/self` is the reading program.
 */
function readsOtherProcess(arg: Arg): boolean {
  // Any `proc` folder followed by a process: also `/proc/self/root/proc/1/…` and `if=/proc/1/mem`.
  const parts = path.posix.normalize(arg.text).split(/[/=:]+/)
  return parts.some((p, i) => {
    const next = parts[i + 1]
    if (next === undefined || next === 'self' || next === 'thread-self') return false
    return matches(p, 'proc', arg.glob) && (/^\d+$/.test(next) || (arg.dynamic && /[$`{]/.test(next)) || (arg.glob && globMayMatch(next, '1')))
  })
}

/** Whether `part` is `name`, or (for a glob word) a pattern that may match it. */
function matches(part: string, name: string, glob: boolean): boolean {
  return part === name || (glob && globMayMatch(part, name))
}

/** Whether the glob `pattern` may match `name`; a pattern too long or odd to check may. */
function globMayMatch(pattern: string, name: string): boolean {
  if (!/[*?[]/.test(pattern)) return pattern === name
  if (pattern.length > 64 || pattern.includes('[:')) return true
  let re = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === '*') re += '.*'
    else if (c === '?') re += '.'
    else if (c === '[' && pattern.indexOf(']', i + 2) > 0) {
      const end = pattern.indexOf(']', i + 2)
      re += `[${pattern.slice(i + 1, end).replace(/^!/, '^').replace(/[\\\]]/g, '\\$&')}]`
      i = end
    } else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  }
  try {
    // A short pattern against a shorter name: matching cannot take long.
    return new RegExp(`^${re}$`).test(name)
  } catch {
    return true
  }
}

/** Files that writing to changes nothing. */
const SINKS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty'])

function rateRedirect(r: Redirect, ctx: Context): Verdict {
  if (r.op === '<' || r.op === '<<' || r.op === '<<-' || r.op === '<<<') return low('reads its input from a file or here-document')
  if ((r.op === '>&' || r.op === '<&') && !r.dynamic && /^(\d+|-)$/.test(r.target)) return low('duplicates a file descriptor')
  if (r.op === '<&') return low('reads its input from a file descriptor')
  return writeTarget({ text: r.target, dynamic: r.dynamic, glob: false }, `\`${r.op}\` writes`, ctx)
}

/**
 * The rating of writing to `target`: a file in the workspace is medium, one outside it
 * high. So is one in `.git`, whose config and hooks name programs that git runs.
 */
function writeTarget(target: Arg, what: string, ctx: Context): Verdict {
  const p = target.text
  if (target.dynamic) {
    // `out/$name` stays in the folder whatever `$name` is; `$dir/x` or `../$x` may not.
    const unknown = /^[$~/`{]/.test(p) || path.posix.normalize(p).startsWith('..')
    if (unknown) return high(`${what} to a path that is only known when the command runs`)
  } else {
    if (SINKS.has(p) || /^\/dev\/fd\/\d+$/.test(p)) return low(`${what} to ${p}, which keeps nothing`)
    if (p.startsWith('~')) return high(`${what} to ${p}, in the home folder`)
    const norm = path.posix.normalize(p)
    if (path.posix.isAbsolute(norm)) {
      return norm === '/tmp' || norm.startsWith('/tmp/') ? medium(`${what} to ${p}`) : high(`${what} to ${p}, outside the workspace`)
    }
    if (norm === '..' || norm.startsWith('../')) return high(`${what} to ${p}, outside the working folder`)
  }
  if (ctx.outside) return high(`${what} to ${p}, which is outside the workspace after the script's \`cd\``)
  if (path.posix.normalize(p).split('/').includes('.git')) return high(`${what} to ${p}, in git's own folder (its config and hooks run programs)`)
  return medium(`${what} to ${p}`)
}

/** `NAME=value`: medium when the variable changes which program runs or what it loads. */
function rateAssignment(assignment: string, ctx: Context): Verdict | undefined {
  return rateVariable(/^[A-Za-z_][A-Za-z0-9_]*/.exec(assignment)?.[0] ?? '', ctx)
}

/**
 * Setting the variable `name`, by any syntax: `NAME=value`, `export`, `read`, `for NAME
 * in`, `printf -v`, arithmetic… Medium when it changes which program runs or what code
 * it loads; CDPATH also sends a later `cd` out of the workspace.
 */
function rateVariable(name: string, ctx: Context): Verdict | undefined {
  if (name === 'CDPATH') ctx.leftWorkspace = true
  if (CODE_VARIABLES.has(name) || CODE_VARIABLE_PREFIXES.some((p) => name.startsWith(p))) {
    return medium(`setting ${name} changes which programs run or what code they load`)
  }
  return undefined
}

// ---- programs --------------------------------------------------------------------

/** What a rule for one program sees. */
interface Call {
  /** The canonical name (`python3.12` is `python`). */
  name: string
  /** The arguments after the program. */
  args: Arg[]
  /** Their texts. */
  words: string[]
  ctx: Context
  redirects: readonly Redirect[]
}

type Rule = (call: Call) => Verdict

function rateProgram(name: string, argv: Arg[], ctx: Context, redirects: readonly Redirect[], byPath: boolean): Verdict {
  const canonical = canonicalName(name)
  const v = rateProgramHere(name, canonical, argv, ctx, redirects, byPath)
  // A build or test in another folder runs that folder's code (its Makefile, package.json, .git/config).
  if (v.risk === 'low' && ctx.outside && (PROJECT_RUNNERS.has(canonical) || RUNNERS.has(canonical))) {
    return medium(`${name} runs the build, tests or configuration of a folder outside the workspace (after the script's \`cd\`)`)
  }
  return v
}

/** Programs whose low rating holds only in the workspace: they run the code and configuration of the folder they run in. */
const PROJECT_RUNNERS = new Set(['npm', 'yarn', 'pnpm', 'bun', 'deno', 'cargo', 'go', 'git', 'mvn', 'gradle', 'python', 'node'])

function rateProgramHere(name: string, canonical: string, argv: Arg[], ctx: Context, redirects: readonly Redirect[], byPath: boolean): Verdict {
  const args = argv.slice(1)
  const rule = lookup(TOOLS, canonical)
  if (rule) return rule({ name: canonical, args, words: args.map((a) => a.text), ctx, redirects })
  const dangerous = lookup(HIGH, canonical)
  if (dangerous) return high(dangerous)
  const changes = lookup(MEDIUM, canonical)
  if (changes) {
    const written = lookup(WRITES, canonical)
    return worst(medium(changes), ...(written ? writtenPaths(args, written).map((a) => writeTarget(a, name, ctx)) : []))
  }
  if (READ_ONLY.has(canonical)) return low(`${name} only reads or prints`)
  if (SHELL_STATE.has(canonical)) return low(`${name} only changes the shell's own state`)
  if (RUNNERS.has(canonical)) return low(`${name} builds or runs tests`)
  return byPath ? low(`${name} is a program run by its path`) : medium(`${name} is not on the list of known read-only programs`)
}

function canonicalName(name: string): string {
  if (/^python[0-9.]*$/.test(name) || /^pypy[0-9.]*$/.test(name)) return 'python'
  if (/^pip[0-9.]*$/.test(name)) return 'pip'
  if (name.startsWith('mkfs')) return 'mkfs'
  return lookup(ALIASES, name) ?? name
}

const ALIASES: Record<string, string> = {
  nodejs: 'node', gawk: 'awk', mawk: 'awk', nawk: 'awk', gsed: 'sed', podman: 'docker',
  gmake: 'make', tofu: 'terraform', 'apt-get': 'apt', yum: 'dnf', '7za': '7z', tsx: 'ts-node',
  mksh: 'ksh', ash: 'dash', gtar: 'tar', bsdtar: 'tar',
}

/** For programs that write files: which operands are written. */
const WRITES: Record<string, 'all' | 'last'> = { touch: 'all', mkdir: 'all', mv: 'all', mkfifo: 'all', cp: 'last', ln: 'last', install: 'last' }

function writtenPaths(args: Arg[], which: 'all' | 'last'): Arg[] {
  const operands = args.filter((a) => !a.text.startsWith('-'))
  // `cp -t dir a b` and `--target-directory=dir` name the destination up front.
  const t = args.findIndex((a) => a.text === '-t' || a.text.startsWith('--target-directory='))
  const dir = t < 0 ? undefined : args[t]!.text === '-t' ? args[t + 1] : { ...args[t]!, text: args[t]!.text.slice(args[t]!.text.indexOf('=') + 1) }
  if (which === 'all') return dir && !operands.includes(dir) ? [...operands, dir] : operands
  return dir ? [dir] : operands.slice(-1)
}

/** Whether `words` holds one of `flags`: exactly, as `--long=value`, or as a letter of a short cluster (`-fd` holds `-f`). */
function hasFlag(words: readonly string[], ...flags: string[]): boolean {
  return words.some((w) =>
    flags.some((f) => w === f || (f.startsWith('--') ? w.startsWith(f + '=') : f.length === 2 && /^-[A-Za-z]+$/.test(w) && w.includes(f[1]!))),
  )
}

/** Whether `words` holds one of the long options `names`, or a prefix of one (GNU getopt takes `--se` for `--set`). */
function hasLong(words: readonly string[], ...names: string[]): boolean {
  return words.some((w) => {
    const key = w.split('=', 1)[0]!
    return w.startsWith('--') && key.length > 3 && names.some((n) => n.startsWith(key))
  })
}

/** The index of the first operand: past the options, and the values of those in `valued`. */
function firstOperand(args: readonly Arg[], valued: readonly string[] = []): number {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text
    if (args[i]!.dynamic || !t.startsWith('-') || t === '-') return i
    if (t === '--') return i + 1
    if (valued.includes(t)) i++
  }
  return args.length
}

/** The subcommand at `i`, or the verdict when it cannot be read. */
function subcommand(call: Call, i: number): string | Verdict {
  const sub = call.args[i]
  if (sub === undefined) return ''
  if (sub.dynamic || sub.glob) return high(`the ${call.name} command \`${sub.text}\` is only known when it runs`)
  return sub.text
}

// ---- options ---------------------------------------------------------------------

/**
 * How a program reads its options, enough to find those that write files or run
 * programs. GNU style: short options in clusters (`-abc`), a value attached (`-ofile`) or
 * in the next word, long options as `--name=value` or `--name value`, any unambiguous
 * prefix of a long name (`--out` is `--output`), options after operands too, and `--`
 * ending them. A prefix of several names is read as the first valued one: the program
 * itself refuses an ambiguous prefix, so nothing is missed by guessing.
 */
interface OptionSpec {
  /** Short options that take a value, as letters. */
  short?: string
  /** Short options whose value can only be attached (`sed -i.bak`): the rest of the cluster. */
  attached?: string
  /** Long options that take a value, with their dashes (xxd's single-dash `-cols` too). */
  long?: readonly string[]
  /** Long options without a value, so that their prefixes are not read as valued ones. */
  flags?: readonly string[]
}

interface Option {
  /** `-o`, or the full long name (`--output` for `--out`). */
  name: string
  value?: Arg
}

interface Scanned {
  options: Option[]
  operands: Arg[]
  /** The first word only known when it runs (`$x`, `{-o,f}`, `*`) where an option could be. */
  unknown?: Arg
}

function scanOptions(args: readonly Arg[], spec: OptionSpec): Scanned {
  const out: Scanned = { options: [], operands: [] }
  const long = spec.long ?? []
  const names = [...long, ...(spec.flags ?? [])]
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const t = arg.text
    if (t === '--') {
      out.operands.push(...args.slice(i + 1))
      break
    }
    if (mayBeOption(arg)) out.unknown ??= arg
    const eq = t.indexOf('=')
    const key = eq < 0 ? t : t.slice(0, eq)
    if (t.startsWith('--') || long.includes(key)) {
      const name = names.includes(key) ? key : key.length > 2 ? (names.find((n) => n.startsWith(key)) ?? key) : key
      if (!long.includes(name)) out.options.push({ name })
      else out.options.push({ name, value: eq >= 0 ? { ...arg, text: t.slice(eq + 1) } : args[++i] })
    } else if (t.length > 1 && t.startsWith('-')) {
      for (let j = 1; j < t.length; j++) {
        const letter = t[j]!
        const valued = spec.short?.includes(letter)
        if (!valued && !spec.attached?.includes(letter)) {
          out.options.push({ name: `-${letter}` })
          continue
        }
        const rest = j + 1 < t.length ? { ...arg, text: t.slice(j + 1) } : valued ? args[++i] : undefined
        out.options.push(rest ? { name: `-${letter}`, value: rest } : { name: `-${letter}` })
        break
      }
    } else out.operands.push(arg)
  }
  return out
}

/**
 * A word that may turn into an option when it runs: one that starts with an expansion
 * (`"$x"` may be `--output=f`), a brace list (bash makes `{-o,f}` two words) or a glob (a
 * file may be named `-ofile`).
 */
function mayBeOption(arg: Arg): boolean {
  return (arg.dynamic && /^[$`{]/.test(arg.text)) || (arg.glob && /^[*?[]/.test(arg.text))
}

/** The options of `scanned` named in `names`. */
function optionsNamed(scanned: Scanned, names: readonly string[]): Option[] {
  return scanned.options.filter((o) => names.includes(o.name))
}

/** Medium when `scanned` has a word that may be an option (see mayBeOption). */
function unknownOption(scanned: Scanned, name: string): Verdict | undefined {
  const w = scanned.unknown
  return w && medium(`${name} is given \`${w.text}\`, only known when it runs, which may be an option that writes files or runs programs`)
}

/** Rates an option whose value is a program to run (`rg --pre cmd`): medium, and the program is rated too. */
function runsOption(o: Option, name: string, ctx: Context): Verdict {
  const program = o.value ?? { text: '', dynamic: false, glob: false }
  return worst(medium(`${name} ${o.name} runs the program ${program.text}`), program.text === '' ? undefined : rateNestedArgv([program], ctx, name))
}

// ---- interpreters ----------------------------------------------------------------

const VERSION_FLAGS = new Set(['--version', '-V', '-v', '-VV', '--help', '-h', '-version'])
const SHELLS = ['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'csh', 'tcsh']

/** sh -c 'script' is medium and its script is rated too; `sh file` runs a script; bare `sh` runs its input. */
function shell(call: Call): Verdict {
  const { name, args, words } = call
  if (words.length === 1 && VERSION_FLAGS.has(words[0]!)) return low(`${name} ${words[0]} prints its version`)
  let inline = false
  let stdin = false
  let i = 0
  for (; i < args.length; i++) {
    const t = words[i]!
    if (args[i]!.dynamic || !/^[-+]./.test(t)) break
    if (t === '--') {
      i++
      break
    }
    if (t.startsWith('--')) {
      if (t === '--rcfile' || t === '--init-file') i++
      continue
    }
    if (t[0] === '-' && t.includes('c')) inline = true
    if (t[0] === '-' && t.includes('s')) stdin = true
    if (/[oO]/.test(t)) i++ // `-o pipefail`, `-O extglob`
  }
  const operand = args[i]
  if (inline) {
    if (!operand) return medium(`${name} -c with no script`)
    return worst(medium(`${name} -c runs an inline script`), rateNestedScript(operand, call.ctx, `${name} -c`))
  }
  if (operand && !stdin) return medium(`${name} runs the script ${operand.text}`)
  const doc = call.redirects.find((r) => r.body !== undefined)
  if (doc) return worst(medium(`${name} runs the script in its here-document`), rateNestedScript({ text: doc.body!, dynamic: false, glob: false }, call.ctx, name))
  const file = call.redirects.find((r) => r.op === '<')
  if (file) return medium(`${name} runs the script ${file.target}`)
  return high(`${name} runs commands from its input, which cannot be checked`)
}

/** Options of other interpreters that take inline code, and those that take the next word. */
const INTERPRETERS: Record<string, { inline: string[]; valued?: string[] }> = {
  python: { inline: ['-c'], valued: ['-W', '-X', '-m'] },
  node: { inline: ['-e', '--eval', '-p', '--print'], valued: ['-r', '--require', '--import', '--loader', '--experimental-loader', '--input-type', '-C', '--conditions'] },
  perl: { inline: ['-e', '-E'], valued: ['-I', '-M', '-m'] },
  ruby: { inline: ['-e'], valued: ['-I', '-r'] },
  php: { inline: ['-r'], valued: ['-c', '-d', '-z'] },
  lua: { inline: ['-e'], valued: ['-l'] },
  luajit: { inline: ['-e'], valued: ['-l'] },
  rscript: { inline: ['-e'] },
  julia: { inline: ['-e', '--eval', '-E', '--print'] },
  'ts-node': { inline: ['-e', '--eval', '-p', '--print'], valued: ['-r', '--require'] },
  osascript: { inline: ['-e'] },
  tclsh: { inline: [] },
  expect: { inline: ['-c'] },
}

/** Python modules that are test runners or only read. */
const PYTHON_LOW_MODULES = new Set(['pytest', 'unittest', 'mypy', 'json.tool', 'pydoc', 'tabnanny', 'pyflakes', 'flake8', 'pylint'])

/** Any code an interpreter runs is medium: inline code, a script, or its input. */
function interpreter(call: Call): Verdict {
  const { name, args, words } = call
  const spec = INTERPRETERS[name]!
  if (words.length === 1 && VERSION_FLAGS.has(words[0]!)) return low(`${name} ${words[0]} prints its version`)
  // Only the options before the script count: `python x.py -m pytest` runs x.py.
  let i = 0
  for (; i < args.length; i++) {
    const t = words[i]!
    if (args[i]!.dynamic || !t.startsWith('-') || t === '-') break
    if (t === '--') {
      i++
      break
    }
    const flag = t.startsWith('--') ? t.split('=', 1)[0]! : t
    if (name === 'python' && /^-[A-Za-z]*m$/.test(t)) return pythonModule(call, i + 1)
    if (name === 'node' && flag === '--test') return low('node --test runs tests')
    if (name === 'node' && (flag === '--check' || flag === '-c')) return low('node --check only checks syntax')
    // A short cluster such as perl's `-ne` or python's `-Bc` holds its inline flag as a letter.
    if (spec.inline.includes(flag) || (!t.startsWith('--') && spec.inline.some((f) => f.length === 2 && t.includes(f[1]!)))) {
      return medium(`${name} ${flag} runs inline code`)
    }
    if (spec.valued?.includes(flag) && !t.includes('=')) i++
  }
  const script = args[i]
  return medium(script && script.text !== '-' ? `${name} runs the script ${script.text}` : `${name} runs code from its input`)
}

function pythonModule(call: Call, at: number): Verdict {
  const module = call.words[at]
  if (module === undefined || call.args[at]!.dynamic) return high('python -m runs a module that is only known when it runs')
  if (module === 'pip') return pip({ ...call, name: 'pip', args: call.args.slice(at + 1), words: call.words.slice(at + 1) })
  if (PYTHON_LOW_MODULES.has(module)) return low(`python -m ${module} runs tests or checks`)
  if (module === 'venv' || module === 'virtualenv') return medium('python -m venv creates a virtual environment')
  return medium(`python -m ${module} runs a Python module`)
}

// ---- subcommand-aware tools ------------------------------------------------------

/** git subcommands that only read. */
const GIT_LOW = new Set([
  'status', 'log', 'diff', 'show', 'rev-parse', 'ls-files', 'ls-tree', 'blame', 'annotate', 'describe',
  'shortlog', 'cat-file', 'rev-list', 'show-ref', 'for-each-ref', 'name-rev', 'merge-base',
  'whatchanged', 'count-objects', 'check-ignore', 'check-attr', 'check-ref-format', 'var', 'version',
  'help', 'diff-tree', 'diff-files', 'diff-index', 'show-branch', 'cherry', 'range-diff',
  'verify-commit', 'verify-tag', 'fsck', 'get-tar-commit-id', 'column', 'request-pull',
])

/** git subcommands that change the repository or the working tree, or download. */
const GIT_MEDIUM: Record<string, string> = {
  add: 'git add stages files',
  stage: 'git stage stages files',
  commit: 'git commit records a commit',
  mv: 'git mv moves files',
  merge: 'git merge changes the branch and files',
  'cherry-pick': 'git cherry-pick changes the branch and files',
  revert: 'git revert records a commit',
  am: 'git am applies patches',
  init: 'git init creates a repository',
  notes: 'git notes changes notes',
  replace: 'git replace changes objects',
  'symbolic-ref': 'git symbolic-ref changes references',
  pull: 'git pull downloads and changes the branch',
  fetch: 'git fetch downloads from a remote',
  clone: 'git clone downloads a repository',
  'ls-remote': 'git ls-remote contacts a remote',
  'format-patch': 'git format-patch writes files',
  archive: 'git archive writes an archive',
  bundle: 'git bundle writes files',
  repack: 'git repack rewrites the object store',
  maintenance: 'git maintenance rewrites the object store',
  'sparse-checkout': 'git sparse-checkout changes the working tree',
  lfs: 'git lfs downloads and changes files',
  mergetool: 'git mergetool runs a merge tool',
  difftool: 'git difftool runs a diff tool',
  'checkout-index': 'git checkout-index writes files',
  'read-tree': 'git read-tree changes the index',
  'update-index': 'git update-index changes the index',
  'hash-object': 'git hash-object can write objects',
  'commit-tree': 'git commit-tree writes objects',
  rerere: 'git rerere changes recorded resolutions',
  rebase: 'git rebase rewrites commits',
  bisect: 'git bisect checks out commits',
  worktree: 'git worktree changes working trees',
  submodule: 'git submodule downloads and changes submodules',
  tag: 'git tag changes tags',
  remote: 'git remote changes remotes',
  switch: 'git switch changes the branch and files',
  checkout: 'git checkout changes the branch or files',
  reset: 'git reset moves the branch or unstages files',
  gc: 'git gc rewrites the object store',
  'update-ref': 'git update-ref changes references',
  apply: 'git apply changes files',
  config: 'git config changes configuration',
  stash: 'git stash sets work aside',
  branch: 'git branch changes branches',
}

/** git subcommands that destroy work, rewrite history or publish. */
const GIT_HIGH: Record<string, string> = {
  push: 'git push changes a remote repository',
  'filter-branch': 'git filter-branch rewrites history',
  'filter-repo': 'git filter-repo rewrites history',
  prune: 'git prune deletes unreachable objects',
  'send-email': 'git send-email sends mail',
  credential: 'git credential reads stored credentials',
  'credential-store': 'git credential-store reads stored credentials',
  'credential-cache': 'git credential-cache reads stored credentials',
}

/** git config sections and names whose values run programs. */
const GIT_CODE_SECTIONS = new Set(['alias', 'pager', 'filter', 'credential', 'include', 'includeif', 'url', 'protocol', 'sendemail', 'browser', 'man', 'difftool', 'mergetool', 'uploadpack', 'gpg', 'submodule'])
const GIT_CODE_NAMES = new Set(['pager', 'editor', 'sshcommand', 'fsmonitor', 'hookspath', 'askpass', 'gitproxy', 'textconv', 'command', 'external', 'driver', 'program', 'uploadpack', 'receivepack', 'proxy', 'difffilter', 'cmd', 'tool', 'helper', 'vcs', 'alternaterefscommand', 'procreceiverefs'])

function gitConfigKey(pair: string, where: string): Verdict | undefined {
  const parts = pair.split('=', 1)[0]!.toLowerCase().split('.')
  if (GIT_CODE_SECTIONS.has(parts[0]!) || GIT_CODE_NAMES.has(parts[parts.length - 1]!)) {
    return high(`${where} ${parts.join('.')} sets a program for git to run`)
  }
  return undefined
}

const GIT_VALUED = ['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--config-env', '--list-cmds']

function git(call: Call): Verdict {
  const { args, words, ctx } = call
  const extra: (Verdict | undefined)[] = []
  let i = 0
  for (; i < args.length && words[i]!.startsWith('-') && !args[i]!.dynamic; i++) {
    const t = words[i]!
    if (t === '--version' || t === '--help' || t === '-h') return low(`git ${t} prints information`)
    if (t === '-c' || t === '--config-env') extra.push(gitConfigKey(words[i + 1] ?? '', `git ${t}`))
    if (t.startsWith('--config-env=')) extra.push(gitConfigKey(t.slice(13), 'git --config-env'))
    if (t.startsWith('--exec-path=')) extra.push(high('git --exec-path runs git programs from another folder'))
    const key = t.split('=', 1)[0]!
    if (key === '-C' || key === '--git-dir' || key === '--work-tree') {
      const value = t.includes('=') ? { ...args[i]!, text: t.slice(key.length + 1) } : args[i + 1]
      extra.push(value && gitRepository(value, key))
    }
    if (GIT_VALUED.includes(t)) i++
  }
  const sub = subcommand(call, i)
  if (typeof sub !== 'string') return sub
  if (sub === '') return low('git with no command prints help')
  const rest = words.slice(i + 1)
  // Options that make git run a program of the caller's choosing, on any subcommand.
  if (rest.some((w) => /^--(upload-pack|receive-pack|exec)(=|$)/.test(w) || w.startsWith('ext::'))) {
    extra.push(high(`git ${sub} is given a program to run`))
  }
  if (sub === 'clone') {
    if (hasFlag(rest, '-u')) extra.push(high('git clone -u runs a program'))
    for (const [j, w] of rest.entries()) if (w === '-c' || w === '--config') extra.push(gitConfigKey(rest[j + 1] ?? '', 'git clone -c'))
  }
  extra.push(...gitOutputs(sub, args.slice(i + 1), ctx))
  return worst(gitSubcommand(sub, rest, call, i + 1), ...extra)
}

/** `git -C dir`, `--git-dir`, `--work-tree`: a repository outside the workspace has its own config, which can run programs. */
function gitRepository(dir: Arg, option: string): Verdict | undefined {
  const norm = path.posix.normalize(dir.text)
  const outside = dir.dynamic || dir.glob || dir.text.startsWith('~') || path.posix.isAbsolute(norm) || norm === '..' || norm.startsWith('../')
  return outside ? medium(`git ${option} ${dir.text} works on a repository outside the workspace, whose configuration can run programs`) : undefined
}

/**
 * What a git subcommand's options write or run, whatever the subcommand: `--output=f`
 * (diff, log, show…) and format-patch's and archive's `-o` write files; `--ext-diff` and
 * `--textconv` run the diff programs of the configuration. git takes any unambiguous
 * prefix of a long option (`--outp`).
 */
function gitOutputs(sub: string, args: Arg[], ctx: Context): Verdict[] {
  const verdicts: Verdict[] = []
  const prefixOf = (key: string, name: string, min: number) => key.length >= min && name.startsWith(key)
  for (let j = 0; j < args.length; j++) {
    const t = args[j]!.text
    if (t === '--') break
    if (GIT_LOW.has(sub) && mayBeOption(args[j]!)) verdicts.push(medium(`git ${sub} is given \`${t}\`, only known when it runs, which may be an option that writes a file`))
    const key = t.split('=', 1)[0]!
    const value = () => (t.includes('=') ? { ...args[j]!, text: t.slice(key.length + 1) } : args[++j])
    let written: Arg | undefined
    let writes = false
    if (key.startsWith('--') && (prefixOf(key, '--output', 5) || (sub === 'format-patch' && prefixOf(key, '--output-directory', 10)))) {
      writes = true
      written = value()
    } else if (/^-o/.test(t) && (sub === 'format-patch' || sub === 'archive')) {
      writes = true
      written = t === '-o' ? args[++j] : { ...args[j]!, text: t.slice(2) }
    } else if (prefixOf(key, '--ext-diff', 5) || prefixOf(key, '--textconv', 6)) {
      verdicts.push(medium(`git ${sub} ${key} runs the diff programs of the repository's configuration`))
    }
    if (writes) verdicts.push(written ? writeTarget(written, `git ${sub} ${key} writes`, ctx) : medium(`git ${sub} ${key} writes a file`))
  }
  return verdicts
}

function gitSubcommand(sub: string, rest: string[], call: Call, at: number): Verdict {
  const positional = rest.filter((w) => !w.startsWith('-'))
  const has = (...flags: string[]) => hasFlag(rest, ...flags)
  if (GIT_LOW.has(sub)) return low(`git ${sub} only reads`)
  const destroys = lookup(GIT_HIGH, sub)
  if (destroys) return high(destroys)
  const medium_ = medium(lookup(GIT_MEDIUM, sub) ?? `git ${sub} is not a known read-only git command (it may be an alias)`)
  switch (sub) {
    case 'grep':
      // `-O` takes its program attached too (`-Ovim`, `-O./x`).
      return rest.some((w) => /^-[A-Za-z]*O/.test(w)) || hasLong(rest, '--open-files-in-pager') ? medium('git grep -O opens a program') : low('git grep only reads')
    case 'rm':
      return has('--cached') ? medium('git rm --cached stops tracking files') : high('git rm deletes files')
    case 'reset':
      return has('--hard', '--merge', '--keep') ? high('git reset --hard discards uncommitted work') : medium_
    case 'clean':
      return has('-n', '--dry-run') ? low('git clean -n only lists files') : high('git clean deletes untracked files')
    case 'checkout':
      return has('-f', '--force') || rest.includes('--') || positional.includes('.') ? high('git checkout of paths discards uncommitted changes') : medium_
    case 'restore':
      return has('--staged', '-S') && !has('--worktree', '-W') ? medium('git restore --staged unstages files') : high('git restore discards uncommitted changes')
    case 'switch':
      return has('--discard-changes', '-f', '--force') ? high('git switch --discard-changes discards uncommitted changes') : medium_
    case 'branch':
      if (has('-D') || (has('-d', '--delete') && has('-f', '--force'))) return high('git branch -D deletes a branch even if it is not merged')
      if (has('-d', '--delete', '-m', '-M', '--move', '-c', '-C', '--copy', '-u', '--set-upstream-to', '--unset-upstream', '--edit-description', '-f', '--force', '-t', '--track')) return medium_
      if (positional.length > 0 && !has('-l', '--list', '-a', '--all', '-r', '--remotes', '--contains', '--no-contains', '--merged', '--no-merged', '--points-at')) return medium('git branch creates a branch')
      return low('git branch lists branches')
    case 'tag':
      if (rest.length === 0 || has('-l', '--list', '-v', '--verify', '--contains', '--no-contains', '--points-at')) return low('git tag lists tags')
      return medium_
    case 'stash': {
      const action = positional[0] ?? 'push'
      if (action === 'list' || action === 'show') return low(`git stash ${action} only reads`)
      if (action === 'drop' || action === 'clear') return high(`git stash ${action} deletes stashed work`)
      return medium_
    }
    case 'remote':
      return positional.length === 0 || positional[0] === 'show' || positional[0] === 'get-url' ? low('git remote only reads') : medium_
    case 'config':
      return gitConfig(rest, positional)
    case 'reflog':
      return positional[0] === 'expire' || positional[0] === 'delete' ? high(`git reflog ${positional[0]} drops history that could restore lost work`) : low('git reflog only reads')
    case 'update-ref':
      return has('-d', '--delete') ? high('git update-ref -d deletes a reference') : medium_
    case 'gc':
      return rest.some((w) => w === '--prune=now' || w === '--prune=all') ? high('git gc --prune=now deletes unreachable commits at once') : medium_
    case 'apply':
      return has('--check', '--stat', '--numstat', '--summary') && !has('--apply', '--index', '--cached') ? low('git apply --check only reads') : medium_
    case 'worktree':
      return positional[0] === 'list' ? low('git worktree list only reads') : medium_
    case 'submodule': {
      if (positional.length === 0 || positional[0] === 'status' || positional[0] === 'summary') return low('git submodule status only reads')
      if (positional[0] !== 'foreach') return medium_
      const script = rest.slice(rest.indexOf('foreach') + 1).filter((w) => w !== '--recursive' && w !== '-q' && w !== '--quiet')
      return worst(medium('git submodule foreach runs a command in each submodule'), rateNestedScript({ text: script.join(' '), dynamic: false, glob: false }, call.ctx, 'git submodule foreach'))
    }
    case 'rebase': {
      const x = rest.findIndex((w) => w === '-x' || w === '--exec')
      const inline = rest.find((w) => w.startsWith('--exec='))
      const script = x >= 0 ? call.args[at + x + 1] : inline !== undefined ? { text: inline.slice(7), dynamic: false, glob: false } : undefined
      return worst(medium_, script && rateNestedScript(script, call.ctx, 'git rebase --exec'))
    }
    case 'bisect': {
      if (positional[0] !== 'run') return ['log', 'visualize', 'view'].includes(positional[0] ?? '') ? low('git bisect log only reads') : medium_
      const run = rest.indexOf('run')
      return worst(medium_, rateNestedArgv(call.args.slice(at + run + 1), call.ctx, 'git'))
    }
    default:
      return medium_
  }
}

function gitConfig(rest: string[], positional: string[]): Verdict {
  const reads = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '-l', '--get-color', '--get-colorbool']
  const writes = ['--add', '--unset', '--unset-all', '--replace-all', '--rename-section', '--remove-section', '--edit', '-e']
  const action = positional[0]
  const isWrite = rest.some((w) => writes.includes(w)) || ['set', 'unset', 'rename-section', 'remove-section', 'edit'].includes(action ?? '')
  const isRead = rest.some((w) => reads.includes(w)) || action === 'get' || action === 'list'
  if (!isWrite && (isRead || positional.length <= 1)) return low('git config only reads')
  const key = action === 'set' ? positional[1] : positional[0]
  return worst(medium('git config changes configuration'), key ? gitConfigKey(key, 'git config') : undefined)
}

/** npm subcommands by rating; anything else is medium. */
const NPM_LOW = new Set([
  'ls', 'list', 'll', 'la', 'view', 'v', 'info', 'show', 'outdated', 'search', 's', 'se', 'find', 'help',
  'prefix', 'root', 'bin', 'explain', 'why', 'fund', 'test', 't', 'tst', 'run', 'run-script', 'rum',
  'urn', 'start', 'stop', 'restart', 'query', 'sbom', 'diff', 'doctor', 'ping', 'whoami', 'audit',
])
const NPM_INSTALL = new Set([
  'install', 'i', 'in', 'ins', 'inst', 'insta', 'instal', 'isnt', 'isnta', 'isntal', 'isntall', 'add',
  'ci', 'clean-install', 'ic', 'install-clean', 'isntall-clean', 'install-test', 'it', 'install-ci-test',
  'cit', 'uninstall', 'un', 'unlink', 'remove', 'rm', 'r', 'update', 'up', 'upgrade', 'udpate', 'link',
  'ln', 'rebuild', 'rb', 'dedupe', 'ddp', 'prune',
])
const NPM_PUBLISH = new Set(['publish', 'unpublish', 'deprecate', 'dist-tag', 'dist-tags', 'owner', 'access', 'token', 'team', 'org', 'hook'])
const NPM_VALUED = ['--prefix', '-C', '--workspace', '-w', '--registry', '--userconfig', '--globalconfig', '--cache', '--loglevel', '--tag', '--otp', '--scope', '--include', '--omit', '--before', '--location']

function npm(call: Call): Verdict {
  const i = firstOperand(call.args, NPM_VALUED)
  const sub = subcommand(call, i)
  if (typeof sub !== 'string') return sub
  const rest = call.words.slice(i + 1)
  const shell = hasFlag(call.words, '--script-shell') ? medium('npm --script-shell runs scripts with another program') : undefined
  if (sub === '') return worst(low('npm with no command prints help'), shell)
  let v: Verdict
  if (NPM_PUBLISH.has(sub)) v = high(`npm ${sub} changes the package registry`)
  else if (NPM_INSTALL.has(sub)) v = medium(`npm ${sub} changes installed packages, which can run their install scripts`)
  else if (sub === 'exec' || sub === 'x') v = medium(`npm ${sub} downloads and runs a package`)
  else if (sub === 'audit') v = rest.includes('fix') ? medium('npm audit fix changes installed packages') : low('npm audit only reads')
  else if (sub === 'config' || sub === 'c' || sub === 'pkg') v = ['get', 'list', 'ls'].includes(rest[0] ?? 'list') ? low(`npm ${sub} only reads`) : medium(`npm ${sub} changes configuration`)
  else if (sub === 'version') v = rest.some((w) => !w.startsWith('-')) ? medium('npm version changes the package version') : low('npm version prints versions')
  else if (NPM_LOW.has(sub)) v = low(sub === 'run' || sub === 'test' || sub === 't' ? `npm ${sub} runs a package script` : `npm ${sub} only reads`)
  else v = medium(`npm ${sub} is not a known read-only npm command`)
  return worst(v, shell)
}

/** yarn and pnpm: installs are medium, publishing high, reads low, and other words name package scripts (low, like `npm run`). */
const YARN_MEDIUM = new Set([
  'add', 'install', 'i', 'remove', 'rm', 'un', 'uninstall', 'upgrade', 'up', 'update', 'upgrade-interactive',
  'dlx', 'exec', 'global', 'link', 'ln', 'unlink', 'import', 'rebuild', 'rb', 'prune', 'fetch', 'patch',
  'patch-commit', 'create', 'store', 'setup', 'env', 'set', 'plugin', 'node', 'dedupe', 'init',
])
const YARN_LOW = new Set(['list', 'ls', 'll', 'la', 'info', 'why', 'outdated', 'licenses', 'root', 'bin', 'audit', 'help', 'config', 'test', 't', 'run'])

function yarnLike(call: Call): Verdict {
  const i = firstOperand(call.args, ['--cwd', '-C', '--dir', '--filter', '-F', '--workspace'])
  const sub = subcommand(call, i)
  if (typeof sub !== 'string') return sub
  const name = call.name
  if (sub === '') return name === 'yarn' ? medium('yarn installs packages') : low(`${name} with no command prints help`)
  if (sub === 'publish' || (sub === 'npm' && call.words[i + 1] === 'publish')) return high(`${name} publish changes the package registry`)
  if (YARN_MEDIUM.has(sub)) return medium(`${name} ${sub} changes installed packages or runs a downloaded one`)
  if (YARN_LOW.has(sub)) return low(`${name} ${sub} only reads or runs a package script`)
  return low(`${name} ${sub} runs a package script`)
}

function bun(call: Call): Verdict {
  const { words } = call
  if (words.length === 1 && VERSION_FLAGS.has(words[0]!)) return low('bun prints its version')
  if (hasFlag(words.slice(0, 1), '-e', '--eval', '-p', '--print')) return medium('bun -e runs inline code')
  const at = firstOperand(call.args)
  const sub = subcommand(call, at)
  if (typeof sub !== 'string') return sub
  if (sub === 'publish') return high('bun publish changes the package registry')
  if (sub === 'test' || sub === 'build') return low(`bun ${sub} builds or runs tests`)
  if (['install', 'i', 'add', 'a', 'remove', 'rm', 'update', 'link', 'unlink', 'pm', 'create', 'c', 'x', 'upgrade', 'init'].includes(sub)) {
    return medium(`bun ${sub} changes installed packages or runs a downloaded one`)
  }
  const target = sub === 'run' ? (words.slice(at + 1).find((w) => !w.startsWith('-')) ?? '') : sub
  return /[./]/.test(target) ? medium(`bun runs the script ${target}`) : low(`bun runs the package script ${target}`)
}

function deno(call: Call): Verdict {
  const sub = subcommand(call, firstOperand(call.args))
  if (typeof sub !== 'string') return sub
  if (sub === '') return low('deno prints information')
  if (sub === 'fmt') return hasFlag(call.words, '--check') ? low('deno fmt --check only reads') : medium('deno fmt rewrites files')
  if (['test', 'bench', 'lint', 'check', 'info', 'doc', 'types', 'coverage', 'task', 'completions'].includes(sub)) return low(`deno ${sub} checks, tests or runs a task`)
  if (sub === 'eval' || sub === 'repl') return medium(`deno ${sub} runs inline code`)
  return medium(sub === 'run' || /[./]/.test(sub) ? 'deno runs a script' : `deno ${sub} changes installed programs or runs code`)
}

const CARGO_LOW = new Set([
  'build', 'b', 'check', 'c', 'test', 't', 'bench', 'doc', 'd', 'run', 'r', 'metadata', 'tree', 'search',
  'locate-project', 'pkgid', 'verify-project', 'version', 'help', 'read-manifest', 'nextest', 'llvm-cov',
  'expand', 'audit', 'deny', 'outdated', 'miri',
])
const CARGO_HIGH = new Set(['publish', 'yank', 'owner'])

function cargo(call: Call): Verdict {
  const { args, words } = call
  let i = 0
  let config: Verdict | undefined
  for (; i < args.length && /^[-+]/.test(words[i]!) && !args[i]!.dynamic; i++) {
    const t = words[i]!
    if (t === '--version' || t === '-V' || t === '--list' || t === '--help' || t === '-h') return low(`cargo ${t} prints information`)
    if (t === '--config' || t.startsWith('--config=')) config = medium('cargo --config changes how the build runs')
    if (['-C', '--config', '-Z', '--color', '--manifest-path'].includes(t)) i++
  }
  const sub = subcommand(call, i)
  if (typeof sub !== 'string') return sub
  const rest = words.slice(i + 1)
  let v: Verdict
  if (sub === '') v = low('cargo with no command prints help')
  else if (CARGO_HIGH.has(sub)) v = high(`cargo ${sub} changes crates.io`)
  else if (sub === 'fmt') v = hasFlag(rest, '--check') ? low('cargo fmt --check only reads') : medium('cargo fmt rewrites files')
  else if (sub === 'clippy') v = hasFlag(rest, '--fix') ? medium('cargo clippy --fix rewrites files') : low('cargo clippy only checks')
  else if (CARGO_LOW.has(sub)) v = low(`cargo ${sub} builds, checks or runs tests`)
  else if (['install', 'uninstall', 'add', 'remove', 'rm', 'update', 'new', 'init', 'fix', 'vendor', 'generate-lockfile', 'clean', 'package', 'fetch', 'login', 'logout'].includes(sub)) {
    v = medium(`cargo ${sub} changes files or installed programs`)
  } else v = medium(`cargo ${sub} is a plugin or not a known cargo command`)
  return worst(v, config)
}

const PIP_LOW = new Set(['list', 'show', 'freeze', 'check', 'help', 'search', 'index', 'inspect', 'debug', 'hash'])

function pip(call: Call): Verdict {
  const { words } = call
  if (words.length === 1 && VERSION_FLAGS.has(words[0]!)) return low('pip prints its version')
  const sub = subcommand(call, firstOperand(call.args, ['--python', '--proxy', '--cert', '--client-cert', '--cache-dir', '--log', '--timeout', '--retries', '--exists-action', '--trusted-host']))
  if (typeof sub !== 'string') return sub
  if (sub === '' || PIP_LOW.has(sub)) return low(`pip ${sub} only reads`)
  if ((sub === 'cache' || sub === 'config') && ['list', 'get', 'dir', 'info', 'debug'].includes(words[words.indexOf(sub) + 1] ?? 'list')) return low(`pip ${sub} only reads`)
  return medium(`pip ${sub} changes installed packages, which can run their setup code`)
}

function uv(call: Call): Verdict {
  const sub = subcommand(call, firstOperand(call.args, ['--directory', '--project', '--python', '-p']))
  if (typeof sub !== 'string') return sub
  if (sub === 'pip') {
    const at = call.words.indexOf('pip') + 1
    return pip({ ...call, name: 'pip', args: call.args.slice(at), words: call.words.slice(at) })
  }
  if (sub === '' || sub === 'version' || sub === 'tree' || sub === 'help' || VERSION_FLAGS.has(call.words[0] ?? '')) return low('uv only reads')
  if (sub === 'publish') return high('uv publish changes the package registry')
  return medium(`uv ${sub} changes the environment or runs code`)
}

function go(call: Call): Verdict {
  const sub = subcommand(call, firstOperand(call.args))
  if (typeof sub !== 'string') return sub
  const rest = call.words.slice(call.words.indexOf(sub) + 1)
  if (sub === 'mod') return ['graph', 'why', 'verify'].includes(rest[0] ?? '') ? low(`go mod ${rest[0]} only reads`) : medium('go mod changes module files or downloads')
  if (sub === 'env') return hasFlag(rest, '-w', '-u') ? medium('go env -w changes configuration') : low('go env only reads')
  if (['', 'build', 'test', 'vet', 'doc', 'list', 'version', 'help', 'run'].includes(sub)) return low(`go ${sub} builds, checks or runs tests`)
  if (sub === 'get' || sub === 'install') return medium(`go ${sub} downloads and installs packages`)
  if (sub === 'generate') return medium('go generate runs the commands written in the sources')
  return medium(`go ${sub} changes files`)
}

const PACKAGE_MANAGER_READS: Record<string, string[]> = {
  apt: ['list', 'search', 'show', 'policy', 'depends', 'rdepends', 'madison', 'changelog', 'check'],
  dnf: ['list', 'info', 'search', 'repolist', 'provides', 'check-update'],
  brew: ['list', 'ls', 'info', 'search', 'outdated', 'deps', 'uses', 'leaves', 'config', 'doctor', 'home', '--version', '--prefix'],
  gem: ['list', 'search', 'info', 'query', 'contents', 'environment', 'which', 'specification', '--version'],
  apk: ['info', 'search', 'list', 'policy'],
  snap: ['list', 'info', 'find'],
  flatpak: ['list', 'info', 'search'],
  conda: ['list', 'info', 'search'],
  zypper: ['search', 'se', 'info', 'if', 'list-updates', 'lu'],
  port: ['list', 'info', 'search', 'installed', 'outdated'],
}

function packageManager(call: Call): Verdict {
  const sub = subcommand(call, firstOperand(call.args))
  if (typeof sub !== 'string') return sub
  if (PACKAGE_MANAGER_READS[call.name]!.includes(sub)) return low(`${call.name} ${sub} only reads`)
  return medium(`${call.name} ${sub} installs or removes packages`)
}

function pacman(call: Call): Verdict {
  return call.words.some((w) => /^-Q/.test(w) || /^-S[sil]+$/.test(w)) ? low('pacman -Q only reads') : medium('pacman installs or removes packages')
}

const DOCKER_GROUPS = new Set(['container', 'image', 'volume', 'network', 'system', 'builder', 'compose', 'context', 'buildx'])
const DOCKER_LOW = new Set([
  'ps', 'images', 'logs', 'inspect', 'version', 'info', 'top', 'port', 'diff', 'history', 'events', 'search', 'stats',
  'container ls', 'container list', 'container ps', 'container inspect', 'container logs', 'container top',
  'container port', 'container diff', 'container stats', 'image ls', 'image list', 'image inspect',
  'image history', 'volume ls', 'volume list', 'volume inspect', 'network ls', 'network list',
  'network inspect', 'system df', 'system info', 'system events', 'context ls', 'context list',
  'context show', 'context inspect', 'compose ps', 'compose logs', 'compose config', 'compose ls',
  'compose version', 'compose images', 'compose top', 'buildx ls', 'buildx inspect',
])
const DOCKER_HIGH = new Set([
  'rm', 'rmi', 'push', 'container rm', 'container prune', 'image rm', 'image prune', 'image push',
  'volume rm', 'volume prune', 'network rm', 'network prune', 'system prune', 'builder prune',
  'buildx prune', 'compose rm', 'compose push',
])
/** Host folders whose mounting gives a container the machine. */
const HOST_DIRS = ['/', '/etc', '/root', '/home', '/var', '/usr', '/bin', '/sbin', '/lib', '/boot', '/proc', '/sys', '/dev', '/run', '/Users', '/private']

function docker(call: Call): Verdict {
  const { args, words } = call
  const i = firstOperand(args, ['-H', '--host', '--context', '-c', '--config', '-l', '--log-level', '--tlscacert', '--tlscert', '--tlskey'])
  const sub = subcommand(call, i)
  if (typeof sub !== 'string') return sub
  if (sub === '' || VERSION_FLAGS.has(words[0] ?? '')) return low('docker prints information')
  const group = DOCKER_GROUPS.has(sub) ? words.slice(i + 1).find((w) => !w.startsWith('-')) : undefined
  const key = group ? `${sub} ${group}` : sub
  const rest = words.slice(i + 1)
  const host = dockerHostAccess(rest)
  if (host) return host
  if (key === 'compose down' && hasFlag(rest, '-v', '--volumes', '--rmi')) return high('docker compose down -v deletes volumes')
  if (DOCKER_LOW.has(key)) return low(`docker ${key} only reads`)
  if (DOCKER_HIGH.has(key)) return high(`docker ${key} deletes or publishes containers, images or volumes`)
  return medium(`docker ${key} changes containers or images`)
}

function dockerHostAccess(rest: string[]): Verdict | undefined {
  for (const [j, w] of rest.entries()) {
    const [flag, attached] = w.includes('=') ? [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)] : [w, undefined]
    const value = attached ?? rest[j + 1] ?? ''
    if (flag === '--privileged') return high('docker --privileged gives the container the whole machine')
    if (['--pid', '--network', '--net', '--ipc', '--uts', '--userns'].includes(flag) && value === 'host') return high(`docker ${flag}=host shares the machine's ${flag.slice(2)}`)
    if (['--cap-add', '--device', '--security-opt'].includes(flag)) return high(`docker ${flag} weakens the container's isolation`)
    if (flag === '-v' || flag === '--volume' || flag === '--mount') {
      const source = flag === '--mount' ? (/(?:^|,)(?:source|src)=([^,]*)/.exec(value)?.[1] ?? '') : value.split(':', 1)[0]!
      const norm = source.startsWith('/') ? path.posix.normalize(source) : source
      if (norm.startsWith('~') || norm.includes('docker.sock') || HOST_DIRS.includes(norm)) return high(`docker mounts ${source} from the machine into the container`)
    }
  }
  return undefined
}

function kubectl(call: Call): Verdict {
  const sub = subcommand(call, firstOperand(call.args, ['-n', '--namespace', '--context', '--kubeconfig', '--cluster', '--user', '-s', '--server']))
  if (typeof sub !== 'string') return sub
  if (['', 'get', 'describe', 'logs', 'top', 'explain', 'version', 'api-resources', 'api-versions', 'cluster-info', 'diff', 'auth', 'events', 'wait'].includes(sub)) return low(`kubectl ${sub} only reads`)
  if (sub === 'config') return ['view', 'get-contexts', 'current-context', 'get-clusters'].includes(call.words[call.words.indexOf('config') + 1] ?? '') ? low('kubectl config only reads') : medium('kubectl config changes configuration')
  if (sub === 'delete' || sub === 'drain') return high(`kubectl ${sub} removes workloads from the cluster`)
  return medium(`kubectl ${sub} changes the cluster`)
}

function terraform(call: Call): Verdict {
  const sub = subcommand(call, firstOperand(call.args))
  if (typeof sub !== 'string') return sub
  if (['', 'plan', 'validate', 'show', 'output', 'version', 'providers', 'graph', '-version', '--version'].includes(sub)) return low(`terraform ${sub} only reads`)
  if (sub === 'fmt') return hasFlag(call.words, '-check') ? low('terraform fmt -check only reads') : medium('terraform fmt rewrites files')
  if (['apply', 'destroy', 'import', 'taint', 'untaint', 'state', 'force-unlock'].includes(sub)) return high(`terraform ${sub} changes real infrastructure`)
  return medium(`terraform ${sub} changes files or downloads providers`)
}

// ---- files and archives ----------------------------------------------------------

/** find primaries that take a value, so a dynamic value (`-name "$x"`) is not read as a primary. */
const FIND_VALUED = new Set([
  '-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-lname', '-ilname',
  '-type', '-xtype', '-user', '-group', '-uid', '-gid', '-perm', '-size', '-links', '-inum', '-samefile',
  '-mtime', '-atime', '-ctime', '-mmin', '-amin', '-cmin', '-used', '-newer', '-anewer', '-cnewer',
  '-maxdepth', '-mindepth', '-fstype', '-context', '-printf', '-regextype', '-files0-from',
])

function find(call: Call): Verdict {
  const { args, words } = call
  const verdicts: (Verdict | undefined)[] = []
  for (let i = 0; i < args.length; i++) {
    const t = words[i]!
    // `find "$dir"` or `find . $test`: a word only known when it runs may be `-delete` or `-exec`.
    if (mayBeOption(args[i]!)) verdicts.push(medium(`find is given \`${t}\`, only known when it runs, which may be an action such as -delete or -exec`))
    if (FIND_VALUED.has(t) || t.startsWith('-newer')) i++
    if (t === '-delete') verdicts.push(high('find -delete deletes files'))
    if (t === '-exec' || t === '-execdir' || t === '-ok' || t === '-okdir') {
      const end = words.findIndex((w, j) => j > i && (w === ';' || w === '+'))
      const stop = end < 0 ? args.length : end
      verdicts.push(medium(`find ${t} runs a command for each file`), rateNestedArgv(args.slice(i + 1, stop), call.ctx, 'find'))
      i = stop
    }
    if (t === '-fprint' || t === '-fprint0' || t === '-fprintf' || t === '-fls') {
      verdicts.push(worst(medium(`find ${t} writes a file`), args[i + 1] && writeTarget(args[i + 1]!, `find ${t}`, call.ctx)))
    }
  }
  return worst(low('find only lists files'), ...verdicts)
}

/**
 * Programs that only read or print unless given an option (or an operand) that writes a
 * file or runs a program. The table is the policy; `optionRule` applies it.
 */
interface OptionRule {
  spec: OptionSpec
  /** Options whose value is a file it writes. */
  writes?: string[]
  /** Options whose value is a program it runs. */
  runs?: string[]
  /** Options whose value is a command line it runs with `sh -c` (a pager, a browser). */
  scripts?: string[]
  /** Options whose value is a configuration file that names programs to run. */
  config?: string[]
  /** The operand (from 0) that is an output file: `uniq in out`, `xxd in out`. */
  output?: number
  /** What it does otherwise. */
  only: string
}

const OPTION_RULES: Record<string, OptionRule> = {
  sort: {
    spec: {
      short: 'kSTto',
      long: ['--key', '--output', '--buffer-size', '--temporary-directory', '--field-separator', '--compress-program', '--files0-from', '--parallel', '--batch-size', '--sort', '--random-source'],
      flags: ['--check', '--merge', '--unique', '--reverse', '--numeric-sort', '--general-numeric-sort', '--human-numeric-sort', '--month-sort', '--version-sort', '--random-sort', '--stable', '--zero-terminated', '--debug', '--help', '--version'],
    },
    writes: ['-o', '--output'],
    runs: ['--compress-program'],
    only: 'sort only prints',
  },
  shuf: { spec: { short: 'ino', long: ['--input-range', '--head-count', '--output', '--random-source'], flags: ['--echo', '--repeat', '--zero-terminated', '--help', '--version'] }, writes: ['-o', '--output'], only: 'shuf only prints' },
  tree: { spec: { short: 'LPIoHT', long: ['--output', '--charset', '--filelimit', '--timefmt', '--sort', '--hintro', '--houtro', '--infile'] }, writes: ['-o', '--output'], only: 'tree only lists files' },
  uniq: { spec: { short: 'fsw', long: ['--skip-fields', '--skip-chars', '--check-chars'], flags: ['--all-repeated', '--group', '--count', '--repeated', '--unique', '--ignore-case', '--zero-terminated'] }, output: 1, only: 'uniq only prints' },
  xxd: { spec: { short: 'cglosnC', long: ['-cols', '-groupsize', '-len', '-offset', '-seek', '-name'] }, output: 1, only: 'xxd only prints' },
  rg: {
    spec: {
      short: 'ABCEefgjMmrTtd',
      long: [
        '--pre', '--pre-glob', '--hostname-bin', '--regexp', '--file', '--glob', '--iglob', '--type', '--type-not', '--type-add', '--type-clear', '--max-count',
        '--max-depth', '--context', '--after-context', '--before-context', '--replace', '--encoding', '--threads', '--max-columns', '--sort', '--sortr',
        '--colors', '--color', '--ignore-file', '--path-separator', '--engine', '--max-filesize', '--dfa-size-limit', '--regex-size-limit', '--hyperlink-format',
        '--context-separator', '--field-context-separator', '--field-match-separator', '--generate',
      ],
    },
    runs: ['--pre', '--hostname-bin'],
    only: 'rg only searches',
  },
  ag: { spec: { short: 'ABCGgmp', long: ['--pager', '--ignore', '--file-search-regex', '--max-count', '--path-to-ignore', '--depth', '--context', '--after', '--before'] }, scripts: ['--pager'], only: 'ag only searches' },
  ack: { spec: { short: 'ABCgm', long: ['--pager', '--type', '--ignore-dir', '--ignore-file', '--max-count', '--output', '--context', '--after-context', '--before-context', '--ackrc'] }, scripts: ['--pager'], config: ['--ackrc'], only: 'ack only searches' },
  man: {
    spec: {
      short: 'CRLmMSsepPrE',
      attached: 'HTX',
      long: ['--config-file', '--pager', '--html', '--prompt', '--locale', '--systems', '--manpath', '--sections', '--extension', '--preprocessor', '--encoding', '--recode'],
    },
    scripts: ['-P', '--pager', '-H', '--html'],
    config: ['-C', '--config-file'],
    only: 'man only shows manual pages',
  },
}

function optionRule(call: Call): Verdict {
  const rule = OPTION_RULES[call.name]!
  const scanned = scanOptions(call.args, rule.spec)
  const { name, ctx } = call
  const verdicts: (Verdict | undefined)[] = [unknownOption(scanned, name)]
  for (const o of optionsNamed(scanned, rule.writes ?? [])) verdicts.push(o.value ? writeTarget(o.value, `${name} ${o.name} writes`, ctx) : medium(`${name} ${o.name} writes a file`))
  for (const o of optionsNamed(scanned, rule.runs ?? [])) verdicts.push(runsOption(o, name, ctx))
  for (const o of optionsNamed(scanned, rule.scripts ?? [])) {
    verdicts.push(worst(medium(`${name} ${o.name} runs a command`), o.value && rateNestedScript(o.value, ctx, `${name} ${o.name}`)))
  }
  for (const o of optionsNamed(scanned, rule.config ?? [])) verdicts.push(medium(`${name} ${o.name} reads a configuration that can name programs to run`))
  const out = rule.output === undefined ? undefined : scanned.operands[rule.output]
  if (out && out.text !== '-') verdicts.push(writeTarget(out, `${name} writes its output`, ctx))
  return worst(low(rule.only), ...verdicts)
}

/** `fd -x cmd args ;` (`--exec`, `-X`, `--exec-batch`): runs a command for the files it finds, like `find -exec`. */
function fd(call: Call): Verdict {
  const { args, name, ctx } = call
  const verdicts: (Verdict | undefined)[] = []
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text
    if (t === '--') break
    if (mayBeOption(args[i]!)) verdicts.push(medium(`${name} is given \`${t}\`, only known when it runs, which may be --exec`))
    /** The program's first word, when it is in this word (`--exec=rm`, `-xrm`). */
    let attached: string | undefined
    let exec = ['-x', '--exec', '-X', '--exec-batch'].includes(t)
    if (t.startsWith('--exec=') || t.startsWith('--exec-batch=')) attached = t.slice(t.indexOf('=') + 1)
    else if (/^-[A-Za-z]/.test(t) && !exec) {
      // In a short cluster (`-Hx`, `-xtouch`) the letters after x or X are the program.
      const at = /[xX]/.exec(t.slice(1, 1 + (/[dtesSEjco]/.exec(t.slice(1))?.index ?? t.length)))?.index
      if (at !== undefined && t.slice(at + 2) !== '') attached = t.slice(at + 2)
      exec = at !== undefined
    }
    if (!exec && attached === undefined) continue
    const command = attached === undefined ? args.slice(i + 1) : [{ ...args[i]!, text: attached }, ...args.slice(i + 1)]
    const end = command.findIndex((a) => a.text === ';')
    verdicts.push(medium(`${name} --exec runs a command for each file it finds`), rateNestedArgv(end < 0 ? command : command.slice(0, end), ctx, name))
    if (end < 0) break
    // Past the `;`: command[k] is args[i + 1 + k], or args[i + k] when the first word was attached.
    i += end + (attached === undefined ? 1 : 0)
  }
  return worst(low(`${name} only lists files`), ...verdicts)
}

/**
 * sed: `-i` edits files in place; the script's `w`/`W` commands and `s///w` flag write
 * files, and its `e` command and `s///e` flag run shell commands (GNU sed). The script is
 * read (see sedScript); one it cannot read, or one from a file, is medium.
 */
function sed(call: Call): Verdict {
  const { ctx } = call
  const scanned = scanOptions(call.args, {
    short: 'efl',
    attached: 'i',
    long: ['--expression', '--file', '--line-length'],
    flags: ['--in-place', '--sandbox', '--quiet', '--silent', '--regexp-extended', '--separate', '--unbuffered', '--null-data', '--zero-terminated', '--posix', '--debug', '--follow-symlinks', '--binary', '--help', '--version'],
  })
  const verdicts: (Verdict | undefined)[] = [unknownOption(scanned, 'sed')]
  const expressions = optionsNamed(scanned, ['-e', '--expression']).map((o) => o.value ?? { text: '', dynamic: false, glob: false })
  const files = optionsNamed(scanned, ['-f', '--file'])
  const operands = [...scanned.operands]
  const scripts = expressions.length + files.length > 0 ? expressions : operands.splice(0, 1)
  if (optionsNamed(scanned, ['-i', '--in-place']).length > 0) {
    verdicts.push(medium('sed -i edits files in place'), ...operands.map((f) => writeTarget(f, 'sed -i writes', ctx)))
  }
  for (const f of files) verdicts.push(medium(`sed -f runs the script file ${f.value?.text ?? ''}, whose commands are not shown here`))
  const sandbox = optionsNamed(scanned, ['--sandbox']).length > 0
  for (const script of scripts) {
    if (script.dynamic) {
      verdicts.push(medium(`the sed script \`${script.text}\` is only known when it runs`))
      continue
    }
    const effects = sedScript(script.text)
    if (effects === undefined) verdicts.push(medium('the sed script could not be read, so what it writes or runs is not known'))
    else if (!sandbox) {
      if (effects.runs) verdicts.push(high('the sed script runs a shell command (the `e` command or `s///e`)'))
      for (const file of effects.writes) verdicts.push(writeTarget({ text: file, dynamic: false, glob: false }, 'the sed script writes', ctx))
    }
  }
  return worst(low('sed only prints'), ...verdicts)
}

/**
 * What a GNU sed script writes (`w file`, `W file`, `s/a/b/w file`) and whether it runs
 * commands (`e`, `s/a/b/e`); undefined when it does not read as a script.
 */
function sedScript(script: string): { runs: boolean; writes: string[] } | undefined {
  const effects = { runs: false, writes: [] as string[] }
  const n = script.length
  let i = 0
  const blanks = () => {
    while (script[i] === ' ' || script[i] === '\t') i++
  }
  const toEndOfLine = () => {
    const start = i
    while (i < n && script[i] !== '\n') i++
    return script.slice(start, i)
  }
  /** A label (`b end`, `:end`) ends at `;` or a newline. */
  const label = () => {
    while (i < n && script[i] !== '\n' && script[i] !== ';') i++
  }
  /** Reads past a regex or replacement that ends with `delim`; false when it does not end. */
  const delimited = (delim: string, brackets: boolean) => {
    while (i < n) {
      const c = script[i]!
      if (c === '\\') i += 2
      else if (c === delim) {
        i++
        return true
      } else if (c === '\n') return false
      else if (c === '[' && brackets) {
        // A bracket expression may hold the delimiter: `s/[/]/x/`, also in `[[:alpha:]/]`.
        let j = i + 1
        if (script[j] === '^') j++
        if (script[j] === ']') j++
        while (j < n && script[j] !== ']' && script[j] !== '\n') {
          const kind = script[j] === '[' ? script[j + 1] : undefined
          if (kind === ':' || kind === '.' || kind === '=') {
            const end = script.indexOf(`${kind}]`, j + 2)
            if (end < 0) return false
            j = end + 2
          } else j++
        }
        if (script[j] !== ']') return false
        i = j + 1
      } else i++
    }
    return false
  }
  const address = (): boolean | undefined => {
    const c = script[i]
    if (c !== undefined && c >= '0' && c <= '9') {
      while (/[0-9~]/.test(script[i] ?? '')) i++
      return true
    }
    if (c === '$') {
      i++
      return true
    }
    if (c === '/' || c === '\\') {
      const delim = c === '/' ? '/' : script[i + 1]
      i += c === '/' ? 1 : 2
      if (delim === undefined || !delimited(delim, true)) return undefined
      while (script[i] === 'I' || script[i] === 'M') i++
      return true
    }
    return false
  }
  while (i < n) {
    const c = script[i]!
    if (' \t\n;'.includes(c)) {
      i++
      continue
    }
    if (c === '#') {
      toEndOfLine()
      continue
    }
    const first = address()
    if (first === undefined) return undefined
    if (first) {
      blanks()
      if (script[i] === ',') {
        i++
        blanks()
        if (script[i] === '+' || script[i] === '~') {
          i++
          while (/[0-9]/.test(script[i] ?? '')) i++
        } else if (address() !== true) return undefined
      }
    }
    blanks()
    while (script[i] === '!') {
      i++
      blanks()
    }
    const command = script[i++]
    switch (command) {
      case '{':
      case '}':
        continue
      case '=': case 'd': case 'D': case 'g': case 'G': case 'h': case 'H': case 'n': case 'N':
      case 'p': case 'P': case 'x': case 'z': case 'F':
        break
      case 'l': case 'L': case 'q': case 'Q':
        blanks()
        while (/[0-9]/.test(script[i] ?? '')) i++
        break
      case ':': case 'b': case 't': case 'T': case 'v':
        blanks()
        label()
        break
      case 'a': case 'i': case 'c':
        // Text to the end of the line, and on while a line ends with a backslash.
        while (i < n) {
          const line = toEndOfLine()
          if (!/(^|[^\\])(\\\\)*\\$/.test(line) || i >= n) break
          i++
        }
        break
      case 'r': case 'R':
        toEndOfLine()
        break
      case 'w': case 'W':
        blanks()
        effects.writes.push(toEndOfLine())
        break
      case 'e':
        effects.runs = true
        toEndOfLine()
        break
      case 's': {
        const delim = script[i++]
        if (delim === undefined || delim === '\n' || delim === '\\') return undefined
        if (!delimited(delim, true) || !delimited(delim, false)) return undefined
        for (;;) {
          const f = script[i]
          if (f !== undefined && 'gpiImM0123456789'.includes(f)) i++
          else if (f === 'e') {
            effects.runs = true
            i++
          } else if (f === 'w') {
            i++
            blanks()
            effects.writes.push(toEndOfLine())
          } else break
        }
        break
      }
      case 'y': {
        const delim = script[i++]
        if (delim === undefined || delim === '\n' || delim === '\\') return undefined
        if (!delimited(delim, false) || !delimited(delim, false)) return undefined
        break
      }
      default:
        return undefined
    }
    blanks()
    const after = script[i]
    if (after !== undefined && !'\n;}#'.includes(after)) return undefined
  }
  return effects
}

function awk(call: Call): Verdict {
  const { words, args } = call
  let program: Arg | undefined
  for (let i = 0; i < words.length; i++) {
    const t = words[i]!
    if (t === '-i' || t === '--include' || t === '-iinplace') {
      if (t === '-iinplace' || words[i + 1] === 'inplace') return medium('awk -i inplace edits files in place')
      i++
    } else if (t === '-f' || t === '--file' || t === '-E' || t === '--exec') return medium(`awk runs the program file ${words[i + 1] ?? ''}`)
    else if (t === '-l' || t === '--load' || t.startsWith('-l')) return medium('awk -l loads an extension library')
    else if (t === '-v' || t === '-F' || t === '--assign' || t === '--field-separator') i++
    else if (t === '-e' || t === '--source') program = { text: (program?.text ?? '') + '\n' + (words[++i] ?? ''), dynamic: !!(program?.dynamic || args[i]?.dynamic), glob: false }
    else if (t === '--') {
      program ??= args[i + 1]
      break
    } else if (!t.startsWith('-') || args[i]!.dynamic) {
      program ??= args[i]
      break
    }
  }
  if (program?.dynamic) return medium(`the awk program \`${program.text}\` is only known when it runs`)
  if (program !== undefined && awkRunsCommands(program.text)) return medium('the awk program runs commands, writes files or loads code')
  return low('awk only prints')
}

/** Whether an awk program calls system(), pipes to or from a command, prints into a file, or loads code (gawk's `@load`, `@include`). */
function awkRunsCommands(program: string): boolean {
  if (/@(load|include)\b/.test(program)) return true
  return program.split(/[;\n{}]/).some((part) => {
    const pipes = part.replaceAll('||', '').includes('|')
    return /\bsystem\s*\(/.test(part) || (part.includes('getline') && pipes) || (/\bprintf?\b/.test(part) && (pipes || part.includes('>')))
  })
}

/** tar options that run a program; GNU tar takes any unambiguous prefix (`--to-com=sh`). */
const TAR_RUNS = ['--to-command', '--checkpoint-action', '--info-script', '--new-volume-script', '--rsh-command', '--use-compress-program']
/** Short tar options that take a value: in a cluster, the rest is that value (`-fI.tar` is not `-I`). */
const TAR_VALUED = 'bCfFgHIKLNTVX'

function tar(call: Call): Verdict {
  const { words } = call
  const first = words[0] ?? ''
  // The first word may be a cluster without a dash: `tar xzf a.tgz`, whose values come later.
  const oldStyle = first.startsWith('-') ? '' : first
  const clusters = words.filter((w) => /^-[A-Za-z]/.test(w)).map((w) => w.slice(1, 1 + (new RegExp(`[${TAR_VALUED}]`).exec(w.slice(1))?.index ?? w.length) + 1))
  const modes = oldStyle + clusters.join('')
  // `-I prog`, `-Iprog` (--use-compress-program) and `-F script` (--info-script) run programs.
  const short = /[IF]/.exec(modes)
  const runs = words.find((w) => {
    const key = w.split('=', 1)[0]!
    return w.startsWith('--') && key.length > 3 && key !== '--checkpoint' && TAR_RUNS.some((n) => n.startsWith(key))
  })
  if (runs || short) return high(`tar ${runs ? runs.split('=', 1)[0] : `-${short![0]}`} runs a program`)
  const unknown = call.args.find(mayBeOption)
  const dir = words.findIndex((w) => w === '-C' || w === '--directory')
  const into = dir >= 0 && call.args[dir + 1] ? writeTarget(call.args[dir + 1]!, 'tar extracts', call.ctx) : undefined
  const maybe = unknown && medium(`tar is given \`${unknown.text}\`, only known when it runs, which may be an option that runs a program`)
  if (/[xX]/.test(modes) || hasFlag(words, '--extract', '--get')) return worst(medium('tar extracts files'), into, maybe)
  if (/[cru]/.test(modes) || hasFlag(words, '--create', '--append', '--update', '--delete')) return worst(medium('tar writes an archive'), maybe)
  return worst(low('tar only lists an archive'), maybe)
}

function unzip(call: Call): Verdict {
  if (hasFlag(call.words, '-l', '-t', '-v', '-Z', '-p', '-c', '-z')) return low('unzip only lists or prints')
  const d = call.words.indexOf('-d')
  return worst(medium('unzip extracts files'), d >= 0 && call.args[d + 1] ? writeTarget(call.args[d + 1]!, 'unzip extracts', call.ctx) : undefined)
}

/** zip writes its archive (the first operand); `-TT cmd` (`--unzip-command`) runs a program to test it. */
function zip(call: Call): Verdict {
  const { words, args, ctx } = call
  const test = words.findIndex((w) => w.startsWith('-TT') || w.startsWith('--unzip-command'))
  if (test >= 0) return high('zip -TT runs a program to test the archive')
  const out = words.findIndex((w) => w === '-O' || w === '--output-file')
  const archive = out >= 0 ? args[out + 1] : args.find((a) => !a.text.startsWith('-'))
  return worst(medium('zip writes an archive'), archive && writeTarget(archive, 'zip writes', ctx))
}

/**
 * Compressors replace each file with a compressed (or decompressed) one, unless they
 * write to standard output (`-c`), only list or test, or read standard input.
 */
const COMPRESSORS: Record<string, OptionSpec & { stdout?: boolean }> = {
  gzip: { short: 'S', long: ['--suffix'] },
  gunzip: { short: 'S', long: ['--suffix'] },
  bzip2: {},
  bunzip2: {},
  xz: { short: 'FCTMS', long: ['--format', '--check', '--threads', '--memlimit', '--suffix', '--files', '--files0'] },
  unxz: { short: 'FCTMS', long: ['--format', '--check', '--threads', '--memlimit', '--suffix', '--files', '--files0'] },
  zstd: { short: 'oD', long: ['--output-dir-flat', '--output-dir-mirror', '--patch-from', '--format', '--memory', '--stream-size', '--size-hint', '--target-compressed-block-size'] },
  unzstd: { short: 'oD', long: ['--output-dir-flat', '--output-dir-mirror', '--patch-from', '--format', '--memory'] },
  zstdcat: { short: 'oD', long: ['--output-dir-flat', '--output-dir-mirror', '--format', '--memory'], stdout: true },
}

function compressor(call: Call): Verdict {
  const { name, ctx } = call
  const spec = COMPRESSORS[name]!
  const scanned = scanOptions(call.args, spec)
  const has = (...names: string[]) => optionsNamed(scanned, names).length > 0
  const outputs = optionsNamed(scanned, ['-o', '--output-dir-flat', '--output-dir-mirror']).map((o) => (o.value ? writeTarget(o.value, `${name} ${o.name} writes`, ctx) : medium(`${name} writes files`)))
  const files = scanned.operands.filter((a) => a.text !== '-')
  const toStdout = spec.stdout || has('-c', '--stdout', '--to-stdout', '-l', '--list', '-t', '--test')
  const replaces = files.length > 0 && !toStdout ? [medium(`${name} replaces files with compressed or decompressed ones`), ...files.map((f) => writeTarget(f, `${name} replaces`, ctx))] : []
  return worst(low(`${name} only writes to its output`), unknownOption(scanned, name), ...outputs, ...replaces)
}

/** split and csplit write pieces named by a prefix (`xaa`, `xx00`); `split --filter` runs a shell command per piece. */
function split(call: Call): Verdict {
  const { name, ctx } = call
  const scanned =
    name === 'split'
      ? scanOptions(call.args, { short: 'abCdlnt', long: ['--suffix-length', '--bytes', '--line-bytes', '--lines', '--number', '--separator', '--additional-suffix', '--filter'] })
      : scanOptions(call.args, { short: 'bfn', long: ['--suffix-format', '--prefix', '--digits'] })
  const prefix = name === 'split' ? scanned.operands[1] : optionsNamed(scanned, ['-f', '--prefix'])[0]?.value
  const filter = optionsNamed(scanned, ['--filter'])[0]
  const script = filter ? worst(medium('split --filter runs a shell command for each piece'), filter.value && rateNestedScript(filter.value, ctx, 'split --filter')) : undefined
  return worst(medium(`${name} writes files`), writeTarget(prefix ?? { text: name === 'split' ? 'x' : 'xx', dynamic: false, glob: false }, `${name} writes pieces`, ctx), unknownOption(scanned, name), script)
}

/** openssl: its network commands reach other machines; `-out` and the like write files. */
function openssl(call: Call): Verdict {
  const { words, args, ctx } = call
  const sub = words[0] ?? ''
  if (['s_client', 's_server', 's_time', 'ocsp'].includes(sub)) return high(`openssl ${sub} reaches the network`)
  const writes = ['-out', '-keyout', '-writerand', '-sess_out', '-CAserial', '-CAcreateserial']
  const targets = words.flatMap((w, i) => (writes.includes(w) && args[i + 1] ? [writeTarget(args[i + 1]!, `openssl ${w} writes`, ctx)] : []))
  return worst(medium('openssl can write keys and certificates'), ...targets)
}

/** script runs a shell and logs it to a file (`typescript` by default); `-c` gives the command. */
function script(call: Call): Verdict {
  const { ctx } = call
  const scanned = scanOptions(call.args, { short: 'cTIOBEmo', attached: 't', long: ['--command', '--log-timing', '--log-in', '--log-out', '--log-io', '--echo', '--logging-format', '--output-limit', '--timing'] })
  const command = optionsNamed(scanned, ['-c', '--command'])[0]
  const logs = [...optionsNamed(scanned, ['-T', '-I', '-O', '-B', '--log-timing', '--log-in', '--log-out', '--log-io']).map((o) => o.value), scanned.operands[0] ?? { text: 'typescript', dynamic: false, glob: false }]
  const written = logs.filter((a) => a !== undefined).map((a) => writeTarget(a, 'script logs', ctx))
  if (!command) return worst(high('script runs a shell that reads commands from its input, which cannot be checked'), ...written)
  return worst(medium('script runs a shell command'), command.value && rateNestedScript(command.value, ctx, 'script -c'), ...written)
}

function tee(call: Call): Verdict {
  const files = call.args.filter((a) => !a.text.startsWith('-'))
  if (files.length === 0) return low('tee only passes its input on')
  return highest(files.map((f) => writeTarget(f, 'tee writes', call.ctx)))
}

function rsync(call: Call): Verdict {
  const operands = call.args.filter((a) => !a.text.startsWith('-'))
  if (operands.some((a) => /^[^/]*:/.test(a.text) || a.text.startsWith('rsync://'))) return high('rsync copies to or from another machine')
  if (hasFlag(call.words, '--delete', '--delete-after', '--delete-before', '--delete-during', '--remove-source-files')) return high('rsync --delete deletes files')
  if (hasFlag(call.words, '-e', '--rsh') || call.words.some((w) => w.startsWith('-e') || w.startsWith('--rsh'))) return high('rsync -e runs a program')
  const dest = operands[operands.length - 1]
  return worst(medium('rsync copies files'), dest && writeTarget(dest, 'rsync writes', call.ctx))
}

// ---- processes -------------------------------------------------------------------

/** ps: BSD-style `e` (`ps eww`, `ps axe`) prints other processes' environments. */
function ps(call: Call): Verdict {
  const valued = new Set(['-p', '-u', '-U', '-g', '-G', '-o', '-O', '-C', '-t', '-s', '-q', '--pid', '--ppid', '--user', '--User', '--group', '--Group', '--format', '--sort', '--tty', '--sid', '--quick-pid', '--cols', '--columns', '--rows', '--lines', '--width'])
  const { words } = call
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!
    if (valued.has(w)) i++
    else if (/^[A-Za-z]+$/.test(w)) {
      if (w.includes('e')) return high("ps e prints other processes' environments, which hold their secrets")
      // BSD options that take the next word: `ps p 123`, `ps U user`, `ps o pid`.
      if (/[pUoOtkq]$/.test(w)) i++
    }
  }
  return low('ps only lists processes')
}

// ---- variables and folders -------------------------------------------------------

/**
 * Builtins that set variables without `NAME=value`: the variables are rated as an
 * assignment would be (setting PATH or GIT_CONFIG_PARAMETERS is medium), and a name only
 * known when it runs may be any of them.
 */
function setsVariables(call: Call, names: (Arg | undefined)[], what: string): Verdict {
  const verdicts = names.map((n) => {
    if (n === undefined) return undefined
    if (n.dynamic || n.glob) return medium(`${call.name} sets a variable whose name \`${n.text}\` is only known when it runs`)
    return rateVariable(n.text.split(/[=[]/, 1)[0]!, call.ctx)
  })
  return worst(low(what), ...verdicts)
}

function read(call: Call): Verdict {
  const scanned = scanOptions(call.args, { short: 'adinNptu' })
  const names = scanned.operands.length > 0 ? scanned.operands : [{ text: 'REPLY', dynamic: false, glob: false }]
  return setsVariables(call, [...names, ...optionsNamed(scanned, ['-a']).map((o) => o.value)], 'read only sets variables')
}

function mapfile(call: Call): Verdict {
  const scanned = scanOptions(call.args, { short: 'dnOsuCc' })
  const callback = optionsNamed(scanned, ['-C'])[0]?.value
  const set = setsVariables(call, [scanned.operands[0] ?? { text: 'MAPFILE', dynamic: false, glob: false }], `${call.name} only sets an array`)
  return worst(set, callback && worst(medium(`${call.name} -C runs a callback`), rateNestedScript(callback, call.ctx, `${call.name} -C`)))
}

/** export, declare, typeset, local, readonly: `NAME=value` words; `-n` makes a name refer to another variable, `-i` evaluates values as arithmetic. */
function declare(call: Call): Verdict {
  const scanned = scanOptions(call.args, {})
  const letters = scanned.options.map((o) => o.name).join('')
  // The name before `=` (`export PATH="$x"` names PATH); a word only known when it runs may be `NAME=value`.
  const names = scanned.operands.map((a) => {
    const eq = a.text.indexOf('=')
    if (eq < 0) return a.dynamic || a.glob ? a : undefined
    const name = a.text.slice(0, eq)
    return { text: name, dynamic: a.dynamic && /[$`{]/.test(name), glob: a.glob && /[*?[]/.test(name) }
  })
  const verdicts: (Verdict | undefined)[] = [setsVariables(call, names, `${call.name} only sets variables`)]
  for (const a of scanned.operands) {
    const value = a.text.slice(a.text.indexOf('=') + 1)
    if (!a.text.includes('=')) continue
    if (letters.includes('n')) verdicts.push(rateVariable(value, call.ctx) ?? (a.dynamic ? medium(`${call.name} -n refers to a variable only known when it runs`) : undefined))
    if (letters.includes('i')) verdicts.push(...arithmeticAssignments(value).map((v) => rateVariable(v, call.ctx)))
  }
  return worst(low(`${call.name} only sets variables`), ...verdicts)
}

/** Arithmetic that assigns: `let PATH=1`, and `[[ PATH=1 -eq 1 ]]` (bash evaluates -eq operands). */
function arithmetic(call: Call): Verdict {
  const { words } = call
  const tests = ['-eq', '-ne', '-lt', '-le', '-gt', '-ge']
  const exprs = call.name === 'let' ? words : words.filter((_, i) => tests.includes(words[i - 1] ?? '') || tests.includes(words[i + 1] ?? ''))
  const set = exprs.flatMap((e) => arithmeticAssignments(e)).map((n) => rateVariable(n, call.ctx))
  return worst(low(call.name === 'let' ? 'let only sets variables' : '[[ only tests'), ...set)
}

/**
 * cd and pushd: the shell's own folder. One that may be outside the workspace (absolute,
 * `~`, `..`, `-`, the home folder, or only known when it runs) makes later relative
 * writes outside it too (see classifyCommand).
 */
function cd(call: Call): Verdict {
  const to = call.args.find((a) => !/^-[LPe@]+$/.test(a.text) && a.text !== '--')
  if (leavesWorkspace(to)) call.ctx.leftWorkspace = true
  return low(`${call.name} only changes the shell's folder`)
}

/** Whether changing to the folder `to` (none: the home folder) may leave the workspace; `/tmp` is as good as inside. */
function leavesWorkspace(to: Arg | undefined): boolean {
  if (to === undefined || to.dynamic || to.glob || /^[~+-]/.test(to.text)) return true
  const norm = path.posix.normalize(to.text)
  if (path.posix.isAbsolute(norm)) return norm !== '/tmp' && !norm.startsWith('/tmp/')
  return norm === '..' || norm.startsWith('../')
}

/** make runs the workspace's Makefile (a build runner, low); `--eval` runs inline make code, `-C`/`-f` another folder's. */
function make(call: Call): Verdict {
  const scanned = scanOptions(call.args, { short: 'CfEIojlWo', long: ['--directory', '--file', '--makefile', '--eval', '--include-dir', '--jobs', '--load-average', '--what-if', '--new-file', '--assume-new', '--old-file', '--assume-old'] })
  const verdicts: (Verdict | undefined)[] = []
  if (optionsNamed(scanned, ['-E', '--eval']).length > 0) verdicts.push(medium('make --eval runs inline make code'))
  for (const o of optionsNamed(scanned, ['-C', '--directory', '-f', '--file', '--makefile'])) {
    if (o.value && leavesWorkspace(o.value)) verdicts.push(medium(`make ${o.name} runs the Makefile of a folder outside the workspace`))
  }
  if (scanned.operands.some((a) => /^(SHELL|MAKESHELL|\.SHELLFLAGS|MAKEFLAGS|MAKEFILES)=/.test(a.text))) verdicts.push(medium('make is given a variable that changes the shell or makefiles it runs'))
  return worst(low(`${call.name} builds or runs tests`), ...verdicts)
}

/** Tools that only check unless given one of these flags, and then rewrite files. */
const WRITES_WITH: Record<string, string[]> = {
  prettier: ['--write', '-w'],
  eslint: ['--fix'],
  biome: ['--write', '--apply', '--apply-unsafe', '--fix', '--unsafe'],
  gofmt: ['-w'],
  'clang-format': ['-i'],
  autopep8: ['-i', '--in-place'],
  yq: ['-i', '--inplace'],
  standard: ['--fix'],
}
/** Tools that rewrite files unless given one of these flags. */
const WRITES_UNLESS: Record<string, string[]> = {
  black: ['--check', '--diff'],
  isort: ['--check', '--check-only', '--diff', '-c'],
  rustfmt: ['--check'],
}

function formatter(call: Call): Verdict {
  const { name, words } = call
  const withFlags = lookup(WRITES_WITH, name)
  const unlessFlags = lookup(WRITES_UNLESS, name) ?? []
  const writes = name === 'ruff' ? (words.includes('format') ? !hasFlag(words, '--check', '--diff') : hasFlag(words, '--fix')) : withFlags ? hasFlag(words, ...withFlags) : !hasFlag(words, ...unlessFlags)
  return writes ? medium(`${name} rewrites files`) : low(`${name} only checks`)
}

const TOOLS: Record<string, Rule> = {
  git,
  npm,
  yarn: yarnLike,
  pnpm: yarnLike,
  bun,
  deno,
  cargo,
  pip,
  uv,
  go,
  docker,
  kubectl,
  terraform,
  find,
  sed,
  awk,
  tar,
  unzip,
  zip,
  tee,
  rsync,
  fd,
  fdfind: fd,
  split,
  csplit: split,
  openssl,
  script,
  ps,
  make,
  read,
  mapfile,
  readarray: mapfile,
  let: arithmetic,
  '[[': arithmetic,
  cd,
  pushd: cd,
  pacman,
  ...Object.fromEntries(Object.keys(OPTION_RULES).map((n) => [n, optionRule])),
  ...Object.fromEntries(Object.keys(COMPRESSORS).map((n) => [n, compressor])),
  ...Object.fromEntries(['export', 'declare', 'typeset', 'local', 'readonly'].map((n) => [n, declare])),
  getopts: (call) => setsVariables(call, [call.args[1]], 'getopts only sets variables'),
  printf: (call) => setsVariables(call, scanOptions(call.args.slice(0, 2), { short: 'v' }).options.map((o) => o.value), 'printf only prints'),
  wait: (call) => setsVariables(call, scanOptions(call.args, { short: 'p' }).options.map((o) => o.value), 'wait only waits'),
  ss: (call) => (scanOptions(call.args, { short: 'AfFN' }).options.some((o) => o.name === '-K' || o.name.startsWith('--kil')) ? high("ss -K closes other programs' connections") : low('ss only lists sockets')),
  file: (call) => (hasFlag(call.words, '-C', '--compile') ? medium('file -C writes a compiled magic file') : low('file only reads')),
  ruff: formatter,
  ...Object.fromEntries(Object.keys(PACKAGE_MANAGER_READS).map((n) => [n, packageManager])),
  ...Object.fromEntries([...Object.keys(WRITES_WITH), ...Object.keys(WRITES_UNLESS)].map((n) => [n, formatter])),
  ...Object.fromEntries(SHELLS.map((n) => [n, shell])),
  ...Object.fromEntries(Object.keys(INTERPRETERS).map((n) => [n, interpreter])),
  eval: (call) => {
    const script = { text: call.words.join(' '), dynamic: call.args.some((a) => a.dynamic), glob: false }
    return worst(high('eval runs a string as shell code'), rateNestedScript(script, call.ctx, 'eval'))
  },
  trap: (call) => {
    const operands = call.args.filter((a) => !/^-[lp]$/.test(a.text))
    if (operands.length < 2 || operands[0]!.text === '-' || operands[0]!.text === '') return low('trap only lists or resets handlers')
    return rateNestedScript(operands[0]!, call.ctx, 'trap')
  },
  alias: (call) => {
    const defined = call.args.filter((a) => a.text.includes('='))
    const scripts = defined.map((a) => rateNestedScript({ ...a, text: a.text.slice(a.text.indexOf('=') + 1) }, call.ctx, 'alias'))
    return worst(low('alias only defines or lists aliases'), ...scripts)
  },
  kill: (call) => (hasFlag(call.words.slice(0, 1), '-l', '-L', '--list', '--table') || call.words[0] === '-0' ? low('kill -0 and kill -l only check or list') : high('kill stops processes')),
  crontab: (call) => (call.words.length === 1 && call.words[0] === '-l' ? low('crontab -l only lists jobs') : high('crontab changes scheduled jobs')),
  systemctl: (call) => {
    const sub = subcommand(call, firstOperand(call.args, ['-t', '--type', '-s', '--signal', '-p', '--property', '-H', '--host', '-M', '--machine', '-n', '--lines', '-o', '--output', '--state', '--root']))
    if (typeof sub !== 'string') return sub
    if (['', 'status', 'show', 'cat', 'help', 'get-default'].includes(sub) || sub.startsWith('list-') || sub.startsWith('is-')) return low(`systemctl ${sub} only reads`)
    return high(`systemctl ${sub} changes system services`)
  },
  service: (call) => (call.words[0] === '--status-all' || call.words[1] === 'status' ? low('service status only reads') : high('service starts and stops system services')),
  hostname: (call) => (call.words.some((w) => !w.startsWith('-')) || hasFlag(call.words, '-F', '-b') || hasLong(call.words, '--file', '--boot') ? high('hostname changes the host name') : low('hostname only prints')),
  date: (call) => {
    const valued = ['-d', '--date', '-r', '--reference', '-f', '--file']
    const sets = call.words.some((w, j) => !w.startsWith('-') && !w.startsWith('+') && !valued.includes(call.words[j - 1] ?? ''))
    return sets || hasFlag(call.words, '-s') || hasLong(call.words, '--set') ? high('date -s sets the system clock') : low('date only prints')
  },
  ip: (call) => (call.words.some((w) => ['add', 'del', 'delete', 'set', 'change', 'replace', 'flush', 'append', 'exec'].includes(w)) ? high('ip changes network settings') : low('ip only shows network settings')),
  ifconfig: (call) => (call.words.filter((w) => !w.startsWith('-')).length > 1 ? high('ifconfig changes network settings') : low('ifconfig only shows network settings')),
  mvn: (call) => (call.words.some((w) => w === 'deploy' || w.startsWith('release:')) ? high('mvn deploy publishes artifacts') : low('mvn builds or runs tests')),
  gradle: (call) => (call.words.some((w) => /^publish/.test(w)) ? high('gradle publish publishes artifacts') : low('gradle builds or runs tests')),
}
