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

use crate::error::{Error, ErrorKind, Result};

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
    let path = find_program(program, env, cwd)?;
    let c = |s: &str| CString::new(s).map_err(|_| Error::new(ErrorKind::InvalidInput, "contains a NUL byte"));
    let file = c(&path)?;
    let argv: Vec<CString> =
        std::iter::once(program).chain(args.iter().map(String::as_str)).map(c).collect::<Result<_>>()?;
    let envp: Vec<CString> = env.iter().map(|e| c(e)).collect::<Result<_>>()?;
    let dir = CString::new(cwd.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::new(ErrorKind::InvalidInput, "folder contains a NUL byte"))?;
    let mut argv_ptrs: Vec<*mut libc::c_char> = argv.iter().map(|a| a.as_ptr() as *mut _).collect();
    argv_ptrs.push(std::ptr::null_mut());
    let mut envp_ptrs: Vec<*mut libc::c_char> = envp.iter().map(|e| e.as_ptr() as *mut _).collect();
    envp_ptrs.push(std::ptr::null_mut());

    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let input = if stdin { Some(pipe()?) } else { None };
    let mut actions = Actions::new()?;
    let mut attr = Attr::new()?;
    // SAFETY: the actions and attributes are initialized; every pointer is valid for the call.
    unsafe {
        match &input {
            Some((r, _)) => check(libc::posix_spawn_file_actions_adddup2(&mut actions.0, raw(r), 0))?,
            None => {
                let null = c("/dev/null")?;
                check(libc::posix_spawn_file_actions_addopen(&mut actions.0, 0, null.as_ptr(), libc::O_RDONLY, 0))?
            }
        }
        check(libc::posix_spawn_file_actions_adddup2(&mut actions.0, raw(&out_w), 1))?;
        check(libc::posix_spawn_file_actions_adddup2(&mut actions.0, raw(&err_w), 2))?;
        check(libc::posix_spawn_file_actions_addchdir_np(&mut actions.0, dir.as_ptr()))?;
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
        libc::posix_spawn(&mut pid, file.as_ptr(), &actions.0, &attr.0, argv_ptrs.as_ptr(), envp_ptrs.as_ptr())
    };
    if rc != 0 {
        let err = Error::io(std::io::Error::from_raw_os_error(rc));
        return Err(Error::new(err.kind(), format!("{program}: {}", err.message())));
    }
    // This side keeps the other ends only; the child's ends close here.
    drop((out_w, err_w));
    Ok(Spawned { pid, stdin: input.map(|(_, w)| w), stdout: out_r, stderr: err_r })
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
}
