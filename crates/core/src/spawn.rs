//! Starting a child process without copying this one. Node's `spawn` forks: the kernel
//! copies every page table of the host before the child can exec, so each command costs
//! the JS thread time in proportion to the host's memory (7–30 ms for a host of 300–400
//! MiB, by machine: BENCHMARKS.md §13). [`spawn`] uses `posix_spawn`, which on Linux is a
//! clone that shares the parent's memory until the exec: its cost does not grow with the
//! host. The child gets a session (and process group) of its own, its signals at their
//! defaults, the working folder and environment given, and pipes for its output (and
//! input, if asked).
//! [`wait`] waits for it to end.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::error::{Error, ErrorKind, Result};
use crate::landlock::{Confinement, Prepared, Step};

/// A child just started: its pid and this side of its pipes (close-on-exec).
#[derive(Debug)]
pub struct Spawned {
    /// The child's pid, also its session and process group id.
    pub pid: i32,
    /// Where its standard input is written, when input was asked for.
    pub stdin: Option<OwnedFd>,
    /// Where its standard output is read.
    pub stdout: OwnedFd,
    /// Where its standard error is read.
    pub stderr: OwnedFd,
}

/// How a child ended: its exit code, or the signal that ended it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exit {
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal number, when a signal ended it.
    pub signal: Option<i32>,
}

/// Starts `program` (a path, or a name looked up in the `PATH` of `env`) with `args`
/// (not counting the program itself, which is `argv[0]` as given), the environment `env`
/// (`NAME=value` strings, and nothing else), in the folder `cwd`, in a new session. Its
/// standard input is a pipe when `stdin`, else `/dev/null`. A program that cannot be
/// found is [`ErrorKind::NotFound`], one that may not be run [`ErrorKind::PermissionDenied`].
pub fn spawn(program: &str, args: &[String], env: &[String], cwd: &Path, stdin: bool) -> Result<Spawned> {
    let cmd = Command::new(program, args, env, cwd)?;
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let input = if stdin { Some(pipe()?) } else { None };
    let mut actions = Actions::new()?;
    let mut attr = Attr::new()?;
    // SAFETY: the actions and attributes are initialized; every pointer is valid for the call.
    unsafe {
        match &input {
            Some((r, _)) => check(libc::posix_spawn_file_actions_adddup2(&mut actions.0, raw(r), 0))?,
            None => check(libc::posix_spawn_file_actions_addopen(
                &mut actions.0,
                0,
                c"/dev/null".as_ptr(),
                libc::O_RDONLY,
                0,
            ))?,
        }
        check(libc::posix_spawn_file_actions_adddup2(&mut actions.0, raw(&out_w), 1))?;
        check(libc::posix_spawn_file_actions_adddup2(&mut actions.0, raw(&err_w), 2))?;
        check(libc::posix_spawn_file_actions_addchdir_np(&mut actions.0, cmd.dir.as_ptr()))?;
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut mask);
        check(libc::posix_spawnattr_setsigmask(&mut attr.0, &mask))?;
        // Every signal at its default (the host ignores SIGPIPE, which `yes | head` needs).
        let mut defaults: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut defaults);
        for sig in 1..65 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::sigaddset(&mut defaults, sig);
            }
        }
        check(libc::posix_spawnattr_setsigdefault(&mut attr.0, &defaults))?;
        // The flags' types differ between the libc of glibc and of musl.
        let flags = libc::POSIX_SPAWN_SETSID as libc::c_int
            | libc::POSIX_SPAWN_SETSIGMASK as libc::c_int
            | libc::POSIX_SPAWN_SETSIGDEF as libc::c_int;
        check(libc::posix_spawnattr_setflags(&mut attr.0, flags as libc::c_short))?;
    }
    let mut pid: libc::pid_t = 0;
    // SAFETY: as above; argv and envp are NULL-terminated arrays of NUL-terminated strings
    // that outlive the call.
    let rc = unsafe {
        libc::posix_spawn(&mut pid, cmd.file.as_ptr(), &actions.0, &attr.0, cmd.argv.as_ptr(), cmd.envp.as_ptr())
    };
    if rc != 0 {
        let err = Error::io(std::io::Error::from_raw_os_error(rc));
        return Err(Error::new(err.kind(), format!("{program}: {}", err.message())));
    }
    // This side keeps the other ends only; the child's ends close here.
    drop((out_w, err_w));
    Ok(Spawned { pid, stdin: input.map(|(_, w)| w), stdout: out_r, stderr: err_r })
}

/// Starts `program` as [`spawn`] does (same arguments, environment, folder, session,
/// signals and pipes), confined by `confinement`: Landlock and seccomp (see
/// [`Confinement`]), no new privileges, and no descriptor of the host's but its standard
/// input, output and error.
///
/// `posix_spawn` runs no code of ours between its clone and the exec, so this does what it
/// does by hand: every signal of this thread is blocked, a child is cloned that shares
/// this memory and runs on a stack of its own while this thread waits (`CLONE_VM |
/// CLONE_VFORK`), and the child makes only system calls on what was prepared here (its
/// handlers set to the defaults first, so no handler of the host's runs in it) until the
/// exec. A failure in the child (a missing folder, an exec that fails, a step of the
/// confinement) is written to memory this side reads when the child is gone, and is
/// returned as an error, the child reaped. Without Landlock in the kernel, or with a
/// writable path that does not exist, nothing is started ([`ErrorKind::InvalidInput`]).
pub fn spawn_confined(
    program: &str,
    args: &[String],
    env: &[String],
    cwd: &Path,
    stdin: bool,
    confinement: &Confinement,
) -> Result<Spawned> {
    let cmd = Command::new(program, args, env, cwd)?;
    let prepared = confinement.prepare()?;
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let input = if stdin { Some(pipe()?) } else { None };
    let child = ChildArgs {
        file: cmd.file.as_ptr(),
        argv: cmd.argv.as_ptr(),
        envp: cmd.envp.as_ptr(),
        dir: cmd.dir.as_ptr(),
        null: c"/dev/null".as_ptr(),
        stdin: input.as_ref().map_or(-1, |(r, _)| raw(r)),
        stdout: raw(&out_w),
        stderr: raw(&err_w),
        prepared: &prepared,
        step: AtomicI32::new(0),
        errno: AtomicI32::new(0),
    };
    let mut stack = vec![0u8; CHILD_STACK];
    // The stack grows down from its 16-byte aligned top.
    let top = ((stack.as_mut_ptr() as usize + CHILD_STACK) & !15) as *mut libc::c_void;
    let all: u64 = !0;
    let mut old: u64 = 0;
    // SAFETY: the child runs `child_main` on its own stack with a pointer to `child`, which
    // outlives it: with CLONE_VFORK this thread resumes only once the child has exec'd or
    // exited. Every signal is blocked meanwhile (raw, so glibc's own two are too), so no
    // handler runs in the child before it resets them; the mask is restored after.
    let (pid, clone_err) = unsafe {
        libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &all, &mut old, 8);
        let pid = libc::clone(
            child_main,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &child as *const ChildArgs as *mut libc::c_void,
        );
        let clone_err = std::io::Error::last_os_error();
        libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &old, std::ptr::null::<u64>(), 8);
        (pid, clone_err)
    };
    drop(stack);
    if pid < 0 {
        return Err(Error::io(clone_err));
    }
    let step = child.step.load(Ordering::Relaxed);
    if step != 0 {
        let errno = child.errno.load(Ordering::Relaxed);
        let _ = wait(pid);
        let err = Error::io(std::io::Error::from_raw_os_error(errno));
        let message = match Step::from_code(step) {
            Some(step) => format!("{program}: {}: {}", step.name(), err.message()),
            None if step == STEP_EXEC || step == STEP_CHDIR => format!("{program}: {}", err.message()),
            None => format!("{program}: starting the child: {}", err.message()),
        };
        return Err(Error::new(err.kind(), message));
    }
    drop((out_w, err_w));
    Ok(Spawned { pid, stdin: input.map(|(_, w)| w), stdout: out_r, stderr: err_r })
}

/// The stack of a confined child until its exec: it only makes system calls.
const CHILD_STACK: usize = 64 * 1024;

/// Steps of the confined child that can fail, past those of [`Step`].
const STEP_SETSID: i32 = 11;
const STEP_FDS: i32 = 12;
const STEP_CHDIR: i32 = 13;
const STEP_EXEC: i32 = 14;

/// What the confined child needs, all prepared by the parent; `step` and `errno` are how
/// it reports a failure.
struct ChildArgs {
    file: *const libc::c_char,
    argv: *const *mut libc::c_char,
    envp: *const *mut libc::c_char,
    dir: *const libc::c_char,
    null: *const libc::c_char,
    /// Its standard input, or -1 for /dev/null.
    stdin: libc::c_int,
    stdout: libc::c_int,
    stderr: libc::c_int,
    prepared: *const Prepared,
    step: AtomicI32,
    errno: AtomicI32,
}

/// The confined child, between the clone and the exec. It shares the parent's memory
/// (whose thread is suspended) and runs on its own stack, so it allocates nothing, takes
/// no lock and makes only async-signal-safe calls.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `ChildArgs`, alive until this child execs or exits;
    // every pointer in it is valid for the calls below.
    unsafe {
        let a = &*(arg as *const ChildArgs);
        let errno = || *libc::__errno_location();
        // Every handler at its default, before the signals are unblocked: a handler of
        // the host's would run here, in the host's memory. Raw, as glibc refuses its own
        // two signals; a zeroed kernel sigaction is SIG_DFL with no flags and no mask.
        let dfl = [0u64; 4];
        for sig in 1..65 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::syscall(libc::SYS_rt_sigaction, sig, dfl.as_ptr(), std::ptr::null::<u64>(), 8);
            }
        }
        if libc::setsid() < 0 {
            fail(a, STEP_SETSID, errno());
        }
        let input = if a.stdin >= 0 { a.stdin } else { libc::open(a.null, libc::O_RDONLY | libc::O_CLOEXEC) };
        if input < 0 || !onto(input, 0) || !onto(a.stdout, 1) || !onto(a.stderr, 2) {
            fail(a, STEP_FDS, errno());
        }
        if libc::chdir(a.dir) != 0 {
            fail(a, STEP_CHDIR, errno());
        }
        if let Err((step, e)) = (*a.prepared).apply() {
            fail(a, step as i32, e);
        }
        // No descriptor of the host's but stdio: an inherited one would reach past the
        // rules. (close_range is older than Landlock: 5.9 against 5.13.)
        if libc::syscall(libc::SYS_close_range, 3, libc::c_uint::MAX, 0) != 0 {
            fail(a, STEP_FDS, errno());
        }
        let empty: u64 = 0;
        libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &empty, std::ptr::null::<u64>(), 8);
        libc::execve(a.file, a.argv as *const *const libc::c_char, a.envp as *const *const libc::c_char);
        fail(a, STEP_EXEC, errno())
    }
}

/// Makes `fd` the child's descriptor `target`, open across the exec.
///
/// # Safety
/// Only system calls; `fd` is open.
unsafe fn onto(fd: libc::c_int, target: libc::c_int) -> bool {
    if fd == target {
        libc::fcntl(fd, libc::F_SETFD, 0) != -1
    } else {
        libc::dup2(fd, target) != -1
    }
}

/// Reports a failure of the confined child to the parent and ends the child.
///
/// # Safety
/// Only in the child: it exits.
unsafe fn fail(a: &ChildArgs, step: i32, errno: i32) -> ! {
    a.errno.store(errno, Ordering::Relaxed);
    a.step.store(step, Ordering::Relaxed);
    libc::_exit(127)
}

/// Waits for the child `pid` (started by [`spawn`]) to end, and reaps it.
pub fn wait(pid: i32) -> Result<Exit> {
    let mut status = 0;
    loop {
        // SAFETY: waits for one child of this process; status is written by the kernel.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(Error::io(err));
        }
    }
    Ok(if libc::WIFEXITED(status) {
        Exit { code: Some(libc::WEXITSTATUS(status)), signal: None }
    } else {
        Exit { code: None, signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)) }
    })
}

/// A program to start, as execve takes it: its path, `argv` and `envp` as
/// NULL-terminated arrays of pointers into the strings held here, and its folder.
struct Command {
    file: CString,
    dir: CString,
    argv: Vec<*mut libc::c_char>,
    envp: Vec<*mut libc::c_char>,
    _strings: (Vec<CString>, Vec<CString>),
}

impl Command {
    fn new(program: &str, args: &[String], env: &[String], cwd: &Path) -> Result<Command> {
        let path = find_program(program, env, cwd)?;
        let c = |s: &str| CString::new(s).map_err(|_| Error::new(ErrorKind::InvalidInput, "contains a NUL byte"));
        let file = c(&path)?;
        let argv: Vec<CString> =
            std::iter::once(program).chain(args.iter().map(String::as_str)).map(c).collect::<Result<_>>()?;
        let envp: Vec<CString> = env.iter().map(|e| c(e)).collect::<Result<_>>()?;
        let dir = CString::new(cwd.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::new(ErrorKind::InvalidInput, "folder contains a NUL byte"))?;
        let pointers = |strings: &[CString]| -> Vec<*mut libc::c_char> {
            strings.iter().map(|s| s.as_ptr() as *mut _).chain(std::iter::once(std::ptr::null_mut())).collect()
        };
        // The pointers stay valid: a CString's bytes do not move when the Vec holding it does.
        Ok(Command { file, dir, argv: pointers(&argv), envp: pointers(&envp), _strings: (argv, envp) })
    }
}

/// The path to run for `program`: itself when it names a path, else the first executable
/// file of that name in the `PATH` of `env` (or `/usr/bin:/bin` without one). A relative
/// folder on the PATH (and an empty one, which means `.`) is taken from `cwd`, the folder
/// the child runs in, as `execvp` in the child would: never from the host's own folder.
fn find_program(program: &str, env: &[String], cwd: &Path) -> Result<String> {
    if program.is_empty() {
        return Err(Error::new(ErrorKind::NotFound, "no program named"));
    }
    if program.contains('/') {
        return Ok(program.to_string());
    }
    let path = env.iter().find_map(|e| e.strip_prefix("PATH=")).unwrap_or("/usr/bin:/bin");
    let mut denied = false;
    for folder in path.split(':') {
        let candidate = cwd.join(folder).join(program);
        let Ok(meta) = std::fs::metadata(&candidate) else { continue };
        if !meta.is_file() {
            continue;
        }
        let Ok(c) = CString::new(candidate.as_os_str().as_encoded_bytes()) else { continue };
        // SAFETY: a NUL-terminated path; access only reads it.
        if unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
            return Ok(candidate.to_string_lossy().into_owned());
        }
        denied = true;
    }
    Err(if denied {
        Error::new(ErrorKind::PermissionDenied, format!("{program}: permission denied"))
    } else {
        Error::new(ErrorKind::NotFound, format!("{program}: not found on PATH"))
    })
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array or fails.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        return Err(Error::io(std::io::Error::last_os_error()));
    }
    // SAFETY: two new descriptors that nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn raw(fd: &OwnedFd) -> libc::c_int {
    std::os::fd::AsRawFd::as_raw_fd(fd)
}

/// A posix_spawn result (an error number, not -1 and errno) as an error.
fn check(rc: libc::c_int) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::io(std::io::Error::from_raw_os_error(rc)))
    }
}

/// `posix_spawn_file_actions_t`, destroyed when dropped.
struct Actions(libc::posix_spawn_file_actions_t);

impl Actions {
    fn new() -> Result<Actions> {
        // SAFETY: initialized by posix_spawn_file_actions_init before any use.
        let mut actions = Actions(unsafe { std::mem::zeroed() });
        // SAFETY: a valid pointer to storage of the right type.
        check(unsafe { libc::posix_spawn_file_actions_init(&mut actions.0) })?;
        Ok(actions)
    }
}

impl Drop for Actions {
    fn drop(&mut self) {
        // SAFETY: initialized in new.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
    }
}

/// `posix_spawnattr_t`, destroyed when dropped.
struct Attr(libc::posix_spawnattr_t);

impl Attr {
    fn new() -> Result<Attr> {
        // SAFETY: initialized by posix_spawnattr_init before any use.
        let mut attr = Attr(unsafe { std::mem::zeroed() });
        // SAFETY: a valid pointer to storage of the right type.
        check(unsafe { libc::posix_spawnattr_init(&mut attr.0) })?;
        Ok(attr)
    }
}

impl Drop for Attr {
    fn drop(&mut self) {
        // SAFETY: initialized in new.
        unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tmp;
    use std::io::{Read, Write};

    fn read_all(fd: OwnedFd) -> String {
        let mut s = String::new();
        std::fs::File::from(fd).read_to_string(&mut s).unwrap();
        s
    }

    const ENV: &[&str] = &["PATH=/usr/bin:/bin", "LANG=C", "ONLY=this"];

    fn env() -> Vec<String> {
        ENV.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn runs_in_its_folder_with_only_the_environment_given_and_its_own_session() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        let script = "pwd; env | sort; cut -d' ' -f6 /proc/$$/stat; echo $$; echo err >&2; exit 3".to_string();
        let child = spawn("sh", &["-c".into(), script], &env(), &dir, false).unwrap();
        let (out, err) = (read_all(child.stdout), read_all(child.stderr));
        assert_eq!(wait(child.pid).unwrap(), Exit { code: Some(3), signal: None });
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], dir.to_str().unwrap());
        assert!(lines.contains(&"ONLY=this") && !out.contains("HOME="), "{out}");
        // Its own session: the session id is its pid.
        let n = lines.len();
        assert_eq!(lines[n - 2].trim(), lines[n - 1].trim());
        assert_eq!(lines[n - 1].trim(), child.pid.to_string());
        assert_eq!(err, "err\n");
    }

    #[test]
    fn input_goes_through_a_pipe_and_signals_are_at_their_defaults() {
        let dir = tmp();
        let mut child = spawn("sh", &["-c".into(), "cat; yes | head -1".into()], &env(), &dir, true).unwrap();
        let mut input = std::fs::File::from(child.stdin.take().unwrap());
        input.write_all(b"hello\n").unwrap();
        drop(input);
        assert_eq!(read_all(child.stdout), "hello\ny\n");
        assert_eq!(wait(child.pid).unwrap().code, Some(0));
    }

    #[test]
    fn a_signal_that_ends_it_is_reported() {
        let child = spawn("sh", &["-c".into(), "kill -9 $$".into()], &env(), &tmp(), false).unwrap();
        assert_eq!(wait(child.pid).unwrap(), Exit { code: None, signal: Some(libc::SIGKILL) });
    }

    #[test]
    fn a_missing_or_unrunnable_program_is_an_error_not_a_child() {
        let dir = tmp();
        assert_eq!(spawn("no-such-program-x", &[], &env(), &dir, false).unwrap_err().kind(), ErrorKind::NotFound);
        assert_eq!(spawn("/no/such/program", &[], &env(), &dir, false).unwrap_err().kind(), ErrorKind::NotFound);
        assert_eq!(spawn("sh", &[], &env(), &dir.join("missing"), false).unwrap_err().kind(), ErrorKind::NotFound);
    }

    #[test]
    fn a_relative_folder_on_the_path_is_the_childs_not_the_hosts() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        std::fs::create_dir(dir.join("bin")).unwrap();
        let tool = dir.join("bin/only-here");
        std::fs::write(&tool, "#!/bin/sh\necho ran from $0\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        // The host's folder is not `dir`: found through the child's folder, or not at all.
        assert_ne!(std::env::current_dir().unwrap(), dir);
        let env = vec!["PATH=bin:/usr/bin:/bin".to_string()];
        let child = spawn("only-here", &[], &env, &dir, false).unwrap();
        assert!(read_all(child.stdout).starts_with("ran from "));
        assert_eq!(wait(child.pid).unwrap().code, Some(0));
        let elsewhere = tmp();
        let err = spawn("only-here", &[], &env, &elsewhere, false).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
    }

    /// Whether Landlock is here; prints why a test is skipped when not.
    fn landlock_here() -> bool {
        let abi = crate::landlock::landlock_abi();
        if abi == 0 {
            println!("landlock is not available in this kernel: skipped");
        }
        abi > 0
    }

    /// Runs `sh -c script` confined to `writable` (or unconfined, with None) and returns
    /// its exit, output and error output.
    fn run(script: &str, confine: Option<&Confinement>) -> (Exit, String, String) {
        let args = ["-c".to_string(), script.to_string()];
        let child = match confine {
            Some(c) => spawn_confined("sh", &args, &env(), &tmp(), false, c).unwrap(),
            None => spawn("sh", &args, &env(), &tmp(), false).unwrap(),
        };
        let err = std::thread::spawn(move || read_all(child.stderr));
        let out = read_all(child.stdout);
        (wait(child.pid).unwrap(), out, err.join().unwrap())
    }

    fn writable(paths: &[&Path]) -> Confinement {
        let mut c = Confinement::new();
        for p in paths {
            c.writable(p);
        }
        c
    }

    #[test]
    fn a_confined_child_writes_beneath_its_writable_folders_only() {
        if !landlock_here() {
            return;
        }
        let (ws, other) = (tmp(), tmp());
        std::fs::write(other.join("keep"), "kept").unwrap();
        std::fs::create_dir(other.join("sub")).unwrap();
        let script = format!(
            "cd {ws} && echo hi > new && mkdir d && mv new d/moved && cat d/moved && rm d/moved && rmdir d && \
             ln -s x link && mkfifo fifo && echo ws-ok; \
             true > /dev/null && echo null-ok; head -c 1 /dev/zero > /dev/full; echo out > /dev/stdout; \
             cat {other}/keep; echo; ls {other}; \
             echo x > {other}/new || echo denied-create; true > {other}/keep || echo denied-truncate; \
             echo x >> {other}/keep || echo denied-append; rm {other}/keep || echo denied-remove; \
             mkdir {other}/d || echo denied-mkdir; rmdir {other}/sub || echo denied-rmdir; \
             mv {other}/keep {ws}/stolen || echo denied-move-out; echo y > {ws}/y; mv {ws}/y {other}/y || echo denied-move-in; \
             ln -s x {other}/link || echo denied-symlink; mknod {ws}/blk b 1 1 || echo denied-mknod; \
             touch /etc/fsgate-escape || echo denied-etc",
            ws = ws.display(),
            other = other.display()
        );
        let (exit, out, err) = run(&script, Some(&writable(&[&ws])));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "hi",
                "ws-ok",
                "null-ok",
                "out",
                "kept",
                "keep",
                "sub",
                "denied-create",
                "denied-truncate",
                "denied-append",
                "denied-remove",
                "denied-mkdir",
                "denied-rmdir",
                "denied-move-out",
                "denied-move-in",
                "denied-symlink",
                "denied-mknod",
                "denied-etc"
            ],
            "{err}"
        );
        assert_eq!(exit.code, Some(0));
        assert!(err.contains("Permission denied"), "{err}");
        assert_eq!(std::fs::read_to_string(other.join("keep")).unwrap(), "kept");
        let mut left: Vec<_> = std::fs::read_dir(&other).unwrap().map(|e| e.unwrap().file_name()).collect();
        left.sort();
        assert_eq!(left, ["keep", "sub"]);
        assert!(!Path::new("/etc/fsgate-escape").exists());
        // The same script unconfined does all of it (so the denials above are the sandbox's).
        let (_, out, _) = run(&script.replace("touch /etc/fsgate-escape ||", "true ||"), None);
        assert!(!out.contains("denied-create") && !out.contains("denied-remove"), "{out}");
    }

    #[test]
    fn a_confined_git_commits_in_its_workspace() {
        if !landlock_here() || !Path::new("/usr/bin/git").exists() {
            println!("needs landlock and /usr/bin/git: skipped");
            return;
        }
        let (ws, home) = (tmp(), tmp());
        // git moves objects between folders (a rename across folders: REFER, ABI 2).
        let script = format!(
            "cd {ws} && git init -q . && echo one > f && git add f && \
             git -c user.name=t -c user.email=t@t commit -qm one && git log --format=%s && git gc -q && git fsck --no-progress && echo fine",
            ws = ws.display()
        );
        let mut env = env();
        env.push(format!("HOME={}", home.display()));
        let mut c = Confinement::new();
        c.writable(&ws).writable(&home);
        let child = spawn_confined("sh", &["-c".into(), script], &env, &ws, false, &c).unwrap();
        let err = std::thread::spawn(move || read_all(child.stderr));
        let out = read_all(child.stdout);
        let exit = wait(child.pid).unwrap();
        let err = err.join().unwrap();
        if crate::landlock::landlock_abi() >= 2 {
            assert_eq!((exit.code, out.as_str()), (Some(0), "one\nfine\n"), "{err}");
        }
    }

    /// A Perl script printing what the network allows: TCP connect to `port`, a UDP
    /// socket, a Unix socket and socket pair, the abstract socket `abstract_name`, io_uring.
    fn net_script(port: u16, abstract_name: &str) -> String {
        format!(
            r#"perl -e 'use Socket;
            if (socket(my $s, PF_INET, SOCK_STREAM, 0)) {{ print connect($s, sockaddr_in({port}, inet_aton("127.0.0.1"))) ? "tcp connected\n" : "tcp connect: $!\n" }} else {{ print "tcp socket: $!\n" }}
            print socket(my $u, PF_INET, SOCK_DGRAM, 0) ? "udp ok\n" : "udp: $!\n";
            print socket(my $n, PF_NETLINK, SOCK_RAW, 0) ? "netlink ok\n" : "netlink: $!\n";
            print socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, PF_UNSPEC) ? "unix pair ok\n" : "unix pair: $!\n";
            if (socket(my $x, PF_UNIX, SOCK_STREAM, 0)) {{ print connect($x, pack_sockaddr_un("\0{abstract_name}")) ? "abstract connected\n" : "abstract connect: $!\n" }} else {{ print "unix socket: $!\n" }}
            my $p = "\0" x 120; print syscall({uring}, 8, $p) >= 0 ? "uring ok\n" : "uring: $!\n";'"#,
            uring = libc::SYS_io_uring_setup
        )
    }

    #[test]
    fn a_confined_child_has_no_network_but_unix_sockets() {
        use std::os::linux::net::SocketAddrExt;
        if !landlock_here() || !Path::new("/usr/bin/perl").exists() {
            println!("needs landlock and /usr/bin/perl: skipped");
            return;
        }
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let name = format!("fsgate-test-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let _unix = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        let script = net_script(tcp.local_addr().unwrap().port(), &name);
        let ws = tmp();
        let (exit, out, err) = run(&script, Some(&writable(&[&ws])));
        assert_eq!(exit.code, Some(0), "{err}");
        let mut expected = vec![
            "tcp socket: Operation not permitted",
            "udp: Operation not permitted",
            "netlink: Operation not permitted",
            "unix pair ok",
        ];
        // No Unix socket either (a pathname one in /run reaches docker or the system bus).
        expected.push("unix socket: Operation not permitted");
        expected.push("uring: Function not implemented");
        assert_eq!(out.lines().collect::<Vec<_>>(), expected, "{err}");
        // Unconfined, the same script reaches all of them.
        let (_, out, _) = run(&script, None);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[..2], ["tcp connected", "udp ok"]);
        assert_ne!(lines[2], "netlink: Operation not permitted");
        assert_eq!(lines[3..5], ["unix pair ok", "abstract connected"]);
        // With the network allowed: TCP and UDP again, still confined to its folders.
        let mut c = writable(&[&ws]);
        c.network(true);
        let (_, out, _) = run(&script, Some(&c));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[..2], ["tcp connected", "udp ok"], "{out}");
        assert_eq!(lines[3], "unix pair ok", "{out}");
        // Abstract Unix sockets outside the sandbox stay out of reach from ABI 6.
        if crate::landlock::landlock_abi() >= 6 {
            assert_eq!(lines[4], "abstract connect: Operation not permitted", "{out}");
        }
    }

    #[test]
    fn a_confined_child_keeps_its_process_group_and_leaves_others_alone() {
        if !landlock_here() || !Path::new("/usr/bin/perl").exists() {
            println!("needs landlock and /usr/bin/perl: skipped");
            return;
        }
        let host = std::process::id();
        let script = format!(
            r#"perl -e 'use POSIX; print POSIX::setsid() < 0 ? "setsid: $!\n" : "setsid ok\n";
            print setpgrp(0, 0) ? "setpgid ok\n" : "setpgid: $!\n";
            print syscall({msgget}, 0, 0x200 | 0600) >= 0 ? "msgget ok\n" : "msgget: $!\n";
            print syscall({shmget}, 0, 4096, 0x200 | 0600) >= 0 ? "shmget ok\n" : "shmget: $!\n";
            my $lim = "\0" x 16; print syscall({prlimit}, {host}, 7, 0, $lim) >= 0 ? "host prlimit ok\n" : "host prlimit: $!\n";
            print syscall({prlimit}, 0, 7, 0, $lim) >= 0 ? "own prlimit ok\n" : "own prlimit: $!\n";
            print syscall({setpriority}, 0, {host}, 5) >= 0 ? "host priority ok\n" : "host priority: $!\n";
            print syscall({setpriority}, 0, 0, 19) >= 0 ? "own priority ok\n" : "own priority: $!\n";'; timeout 5 true && echo timeout-ok"#,
            msgget = libc::SYS_msgget,
            shmget = libc::SYS_shmget,
            prlimit = libc::SYS_prlimit64,
            setpriority = libc::SYS_setpriority,
        );
        let (exit, out, err) = run(&script, Some(&writable(&[&tmp()])));
        assert_eq!(exit.code, Some(0), "{err}");
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "setsid: Operation not permitted",
                "setpgid: Operation not permitted",
                "msgget: Operation not permitted",
                "shmget: Operation not permitted",
                "host prlimit: Operation not permitted",
                "own prlimit ok",
                "host priority: Operation not permitted",
                "own priority ok",
                "timeout-ok",
            ],
            "{err}"
        );
        // Unconfined, reading the host's limits goes through: the refusal is the filter's.
        let read = format!(
            r#"perl -e 'my $l = "\0" x 16; print syscall({}, {host}, 7, 0, $l) >= 0 ? "host prlimit ok\n" : "host prlimit: $!\n"'"#,
            libc::SYS_prlimit64
        );
        assert_eq!(run(&read, None).1, "host prlimit ok\n");
    }

    #[test]
    fn a_confined_child_reads_only_what_it_is_given() {
        if !landlock_here() {
            return;
        }
        let (given, sibling, ws) = (tmp(), tmp(), tmp());
        std::fs::write(given.join("a"), "folder\n").unwrap();
        let file = crate::testutil::wfile(&sibling, "f", b"file\n");
        std::fs::write(sibling.join("secret"), "secret\n").unwrap();
        std::fs::write(ws.join("c"), "ws\n").unwrap();
        // A link among the readable paths is not followed to what it points to.
        std::os::unix::fs::symlink(&sibling, ws.join("link-to-sibling")).unwrap();
        let link = given.join("link");
        std::os::unix::fs::symlink(&sibling, &link).unwrap();
        let mut c = writable(&[&ws]);
        for p in ["/usr", "/bin", "/lib", "/lib64", "/etc"] {
            c.readable(p);
        }
        c.readable(&given).readable(&file).readable(&link).readable(ws.join("gone-since"));
        let script = format!(
            "cat {g}/a {f} {w}/c; cat {s}/secret || echo sibling-denied; ls {s} || echo list-denied; \
             cat {g}/link/secret || echo link-denied",
            g = given.display(),
            f = file.display(),
            w = ws.display(),
            s = sibling.display()
        );
        let (exit, out, err) = run(&script, Some(&c));
        assert_eq!(out, "folder\nfile\nws\nsibling-denied\nlist-denied\nlink-denied\n", "{err}");
        assert_eq!(exit.code, Some(0));
        // Without readable paths, everything is readable (the denials above are the rules').
        let (_, out, _) = run(&script, Some(&writable(&[&ws])));
        assert_eq!(out, "folder\nfile\nws\nsecret\nf\nsecret\nsecret\n");
    }

    #[test]
    fn a_confined_shell_cannot_start_a_session_change_the_hosts_limits_or_make_ipc_objects() {
        if !landlock_here() {
            return;
        }
        let host = std::process::id();
        let limit = || {
            let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: getrlimit writes into the struct.
            assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) }, 0);
            (l.rlim_cur, l.rlim_max)
        };
        let before = limit();
        let has = |tool: &str| Path::new("/usr/bin").join(tool).exists();
        // `setsid` fails, and a grandchild that calls setsid (and goes on) is still in the
        // child's session.
        let script = r#"setsid true; echo "setsid $?"; \
            perl -e 'use POSIX; POSIX::setsid(); open my $f, "/proc/self/stat"; print +(split / /, <$f>)[5], "\n"' & wait; \
            echo $$; timeout 5 true && echo timeout-ok"#;
        let (exit, out, err) = run(script, Some(&Confinement::new()));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}{err}");
        assert_eq!((lines[0], lines[3]), ("setsid 1", "timeout-ok"), "{out}{err}");
        assert_eq!(lines[1], lines[2], "{out}");
        assert_eq!(exit.code, Some(0));
        // Unconfined, the same calls make a session of their own.
        let (_, out, _) = run(script, None);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "setsid 0", "{out}");
        assert_ne!(lines[1], lines[2], "{out}");
        if has("prlimit") {
            let script = format!(
                "prlimit --pid {host} --nofile=100: 2>/dev/null && echo host-changed || echo host-denied; \
                 prlimit --nofile=100: sh -c 'ulimit -n'"
            );
            let (_, out, err) = run(&script, Some(&Confinement::new()));
            assert_eq!(out, "host-denied\n100\n", "{err}");
            assert_eq!(limit(), before);
        } else {
            println!("no /usr/bin/prlimit: its part skipped");
        }
        if has("ipcmk") {
            let (_, out, err) =
                run("ipcmk -Q || echo queue-denied; ipcmk -M 4096 || echo shm-denied", Some(&Confinement::new()));
            assert_eq!(out, "queue-denied\nshm-denied\n", "{err}");
        } else {
            println!("no /usr/bin/ipcmk: its part skipped (the filter test covers msgget and shmget)");
        }
    }

    #[test]
    fn a_confined_child_cannot_read_the_hosts_memory_environment_or_signal_it() {
        if !landlock_here() {
            return;
        }
        let host = std::process::id();
        let script = format!(
            "cat /proc/{host}/environ > /dev/null && echo environ-read || echo environ-denied; \
             cat /proc/{host}/maps > /dev/null && echo maps-read || echo maps-denied; \
             (exec 3< /proc/{host}/mem) && echo mem-opened || echo mem-denied; \
             ls /proc/{host}/cwd/ > /dev/null && echo cwd-read || echo cwd-denied; \
             kill -0 {host} && echo signal-sent || echo signal-denied; \
             kill -0 $$ && echo self-signal-sent"
        );
        let (_, out, _) = run(&script, None);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            ["environ-read", "maps-read", "mem-opened", "cwd-read", "signal-sent", "self-signal-sent"]
        );
        let (_, out, err) = run(&script, Some(&Confinement::new()));
        let signal = if crate::landlock::landlock_abi() >= 6 { "signal-denied" } else { "signal-sent" };
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            ["environ-denied", "maps-denied", "mem-denied", "cwd-denied", signal, "self-signal-sent"],
            "{err}"
        );
    }

    /// The capabilities of this process's bounding set, from /proc.
    fn bounding_set(status: &str) -> u64 {
        let line = status.lines().find(|l| l.starts_with("CapBnd:")).unwrap();
        u64::from_str_radix(line["CapBnd:".len()..].trim(), 16).unwrap()
    }

    #[test]
    fn a_confined_child_keeps_only_the_capabilities_that_act_within_the_sandbox() {
        if !landlock_here() {
            return;
        }
        let host = bounding_set(&std::fs::read_to_string("/proc/self/status").unwrap());
        let (_, out, _) = run("grep -E '^Cap|^NoNewPrivs|^Seccomp:' /proc/self/status", Some(&Confinement::new()));
        let kept: u64 = crate::landlock::KEPT_CAPABILITIES.iter().map(|c| 1u64 << c).sum();
        // Dropping needs CAP_SETPCAP (bit 8); without it there is nothing the exec would grant.
        if host & (1 << 8) != 0 {
            assert_eq!(bounding_set(&out), host & kept, "{out}");
            assert!(out.contains("CapAmb:\t0000000000000000"), "{out}");
        }
        assert!(out.contains("NoNewPrivs:\t1") && out.contains("Seccomp:\t2"), "{out}");
    }

    #[test]
    fn a_confined_child_keeps_its_pipes_input_exit_code_and_session() {
        if !landlock_here() {
            return;
        }
        let dir = std::fs::canonicalize(tmp()).unwrap();
        let script = "cat; pwd; echo err >&2; ls /proc/self/fd; cut -d' ' -f6 /proc/$$/stat; echo $$; exit 7";
        let mut child =
            spawn_confined("sh", &["-c".into(), script.into()], &env(), &dir, true, &Confinement::new()).unwrap();
        std::fs::File::from(child.stdin.take().unwrap()).write_all(b"hello\n").unwrap();
        let err = std::thread::spawn(move || read_all(child.stderr));
        let out = read_all(child.stdout);
        assert_eq!(wait(child.pid).unwrap(), Exit { code: Some(7), signal: None });
        assert_eq!(err.join().unwrap(), "err\n");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[..2], ["hello", dir.to_str().unwrap()]);
        // Only stdio is open, and the one `ls` opens to list them.
        assert_eq!(lines[2..6], ["0", "1", "2", "3"], "{out}");
        assert_eq!(lines[6], lines[7]);
        assert_eq!(lines[7], child.pid.to_string());
        // Signals at their defaults (the host may ignore SIGPIPE), and a signal exit reported.
        let (exit, out, _) = run("yes | head -1; kill -9 $$", Some(&Confinement::new()));
        assert_eq!((exit, out.as_str()), (Exit { code: None, signal: Some(libc::SIGKILL) }, "y\n"));
    }

    #[test]
    fn a_confined_start_that_fails_is_an_error_not_a_child() {
        use std::os::unix::fs::PermissionsExt;
        if !landlock_here() {
            return;
        }
        let dir = tmp();
        let c = Confinement::new();
        let err = spawn_confined("/no/such/program", &[], &env(), &dir, false, &c).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
        assert!(err.message().starts_with("/no/such/program: "), "{}", err.message());
        let plain = crate::testutil::wfile(&dir, "plain", b"#!/bin/sh\n");
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = spawn_confined(plain.to_str().unwrap(), &[], &env(), &dir, false, &c).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
        let err = spawn_confined("sh", &[], &env(), &dir.join("missing"), false, &c).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
        let mut missing = Confinement::new();
        missing.writable(dir.join("missing"));
        let err = spawn_confined("sh", &[], &env(), &dir, false, &missing).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }

    /// The cost of starting `true` (until the start returns: its exec is done), confined
    /// and not, the two alternated so that the machine's load falls on both alike: run
    /// with `cargo test -p fsgate-core --release -- --ignored --nocapture start_up_cost`.
    #[test]
    #[ignore]
    fn start_up_cost() {
        if !landlock_here() {
            return;
        }
        let dir = tmp();
        let confinement = writable(&[&dir]);
        let micros = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e6;
        let (mut plain, mut confined, mut prepare) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..500 {
            let t = std::time::Instant::now();
            let child = spawn("true", &[], &env(), &dir, false).unwrap();
            plain.push(micros(t));
            assert_eq!(wait(child.pid).unwrap().code, Some(0));
            let t = std::time::Instant::now();
            let child = spawn_confined("true", &[], &env(), &dir, false, &confinement).unwrap();
            confined.push(micros(t));
            assert_eq!(wait(child.pid).unwrap().code, Some(0));
            let t = std::time::Instant::now();
            drop(confinement.prepare().unwrap());
            prepare.push(micros(t));
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (plain, confined, prepare) = (median(plain), median(confined), median(prepare));
        println!(
            "start of `true`, median of 500: posix_spawn {plain:.0} µs, confined {confined:.0} µs \
             (ruleset and filter {prepare:.0} µs of it), ratio {:.2}",
            confined / plain
        );
    }
}
