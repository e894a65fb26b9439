//! Child processes for shell and git: started with the core's `posix_spawn` on the I/O
//! pool (never forking the host on the JS thread), and waited for on a thread of their
//! own. Linux only; elsewhere JavaScript uses Node's spawn (`nativeSpawnAvailable`).

use napi_derive::napi;

use crate::{run_on_io_pool, AnyReply, Completer};
#[cfg(target_os = "linux")]
use crate::{Done, NativeError, Reply};

/// What to start.
#[napi(object)]
pub struct SpawnOptions {
    /// The program: a path, or a name looked up in the PATH of `env`.
    pub file: String,
    /// Its arguments (not counting the program).
    pub args: Vec<String>,
    /// Its whole environment, as `NAME=value` strings.
    pub env: Vec<String>,
    /// The folder it runs in.
    pub cwd: String,
    /// Whether its standard input is a pipe (else /dev/null). @default false
    pub stdin: Option<bool>,
    /// Confines it with Landlock and seccomp (Linux with Landlock only: else the start
    /// fails, and nothing runs). @default undefined (not confined)
    pub confine: Option<ConfineOptions>,
}

/// What a confined child may read and change: it may read and run anything (or only
/// `readable` and `writable`, when `readable` is given), write only beneath `writable`
/// (and /dev/null, /dev/zero, /dev/full, /dev/tty), and use no socket (but Unix socket
/// pairs) unless `network`.
#[napi(object)]
pub struct ConfineOptions {
    /// The folders (or files) it may write, make and remove files in; each must exist.
    pub writable: Vec<String>,
    /// The folders (or files) it may read and run; given, nothing else is readable but
    /// the writable paths. One that is gone is skipped; a symbolic link is not followed.
    /// Not empty. @default undefined (everything is readable)
    pub readable: Option<Vec<String>>,
    /// Whether it may use the network (any socket, Unix ones too, TCP bind and connect).
    /// @default false
    pub network: Option<bool>,
}

#[cfg(target_os = "linux")]
impl TryFrom<&ConfineOptions> for fsgate_core::Confinement {
    type Error = fsgate_core::Error;

    fn try_from(options: &ConfineOptions) -> Result<fsgate_core::Confinement, fsgate_core::Error> {
        let mut c = fsgate_core::Confinement::new();
        for path in &options.writable {
            c.writable(path);
        }
        match options.readable.as_deref() {
            // No rule would be added, and everything would be readable: refused instead.
            Some([]) => {
                return Err(fsgate_core::Error::new(
                    fsgate_core::ErrorKind::InvalidInput,
                    "confine.readable is empty: leave it out to read everything",
                ))
            }
            readable => readable.into_iter().flatten().for_each(|path| {
                c.readable(path);
            }),
        }
        c.network(options.network.unwrap_or(false));
        Ok(c)
    }
}

/// A child just started, in a session of its own: its pid and this side of its pipes,
/// as file descriptors that JavaScript now owns.
#[napi(object)]
pub struct SpawnedChild {
    /// Its pid, also its session and process group id.
    pub pid: i32,
    /// Where its standard input is written, when asked for.
    pub stdin: Option<i32>,
    /// Where its standard output is read.
    pub stdout: i32,
    /// Where its standard error is read.
    pub stderr: i32,
}

/// How a child ended.
#[napi(object)]
pub struct ChildExit {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The number of the signal that ended it.
    pub signal: Option<i32>,
}

/// Whether `spawnChild` and `waitChild` work on this platform.
#[napi]
pub fn native_spawn_available() -> bool {
    cfg!(target_os = "linux")
}

/// The Landlock ABI version of the kernel (0 without Landlock, and off Linux): `confine`
/// needs at least 1.
#[napi]
pub fn landlock_abi() -> i32 {
    #[cfg(target_os = "linux")]
    return fsgate_core::landlock_abi();
    #[cfg(not(target_os = "linux"))]
    return 0;
}

/// Makes the host process dumpable or not (`prctl(PR_SET_DUMPABLE)`): not dumpable, its
/// memory, environment and maps in /proc may not be read, nor the process ptraced, by
/// other processes of the same user (root still may). Returns whether the setting took
/// (false off Linux).
#[napi]
pub fn set_host_dumpable(dumpable: bool) -> bool {
    #[cfg(target_os = "linux")]
    return fsgate_core::set_host_dumpable(dumpable);
    #[cfg(not(target_os = "linux"))]
    return {
        let _ = dumpable;
        false
    };
}

/// Starts a child on the I/O pool; the reply goes to `completer` as `id`.
#[napi]
pub fn spawn_child(completer: &Completer, id: u32, options: SpawnOptions) {
    #[cfg(target_os = "linux")]
    run_on_io_pool(completer, id, AnyReply::Spawned, move || {
        use std::os::fd::IntoRawFd;
        let cwd = std::path::PathBuf::from(&options.cwd);
        let stdin = options.stdin.unwrap_or(false);
        let child = match &options.confine {
            None => fsgate_core::spawn(&options.file, &options.args, &options.env, &cwd, stdin)?,
            Some(confine) => {
                let confinement = fsgate_core::Confinement::try_from(confine)?;
                fsgate_core::spawn_confined(&options.file, &options.args, &options.env, &cwd, stdin, &confinement)?
            }
        };
        Ok(SpawnedChild {
            pid: child.pid,
            stdin: child.stdin.map(IntoRawFd::into_raw_fd),
            stdout: child.stdout.into_raw_fd(),
            stderr: child.stderr.into_raw_fd(),
        })
    });
    #[cfg(not(target_os = "linux"))]
    run_on_io_pool(completer, id, AnyReply::Spawned, move || Err::<SpawnedChild, _>(unsupported(&options.file)));
}

/// Waits for a child that `spawnChild` started, on a thread of its own (it may run for
/// minutes); the reply goes to `completer` as `id`.
#[napi]
pub fn wait_child(completer: &Completer, id: u32, pid: i32) {
    #[cfg(target_os = "linux")]
    {
        use napi::threadsafe_function::ThreadsafeFunctionCallMode;
        let done = completer.done.clone();
        let started = std::thread::Builder::new().name("fsgate-wait".into()).stack_size(64 * 1024).spawn(move || {
            let reply = match fsgate_core::wait(pid) {
                Ok(exit) => Reply { value: Some(ChildExit { code: exit.code, signal: exit.signal }), error: None },
                Err(err) => Reply { value: None, error: Some(NativeError::from(&err)) },
            };
            done.call(Done { id, reply: AnyReply::Exited(reply) }, ThreadsafeFunctionCallMode::NonBlocking);
        });
        if let Err(err) = started {
            let reply = Reply::<ChildExit> {
                value: None,
                error: Some(NativeError::internal(format!("no thread to wait on: {err}"))),
            };
            completer.done.call(Done { id, reply: AnyReply::Exited(reply) }, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
    #[cfg(not(target_os = "linux"))]
    run_on_io_pool(completer, id, AnyReply::Exited, move || Err::<ChildExit, _>(unsupported(&pid.to_string())));
}

#[cfg(not(target_os = "linux"))]
fn unsupported(what: &str) -> fsgate_core::Error {
    fsgate_core::Error::new(fsgate_core::ErrorKind::InvalidInput, format!("{what}: native spawn is Linux's only"))
}
