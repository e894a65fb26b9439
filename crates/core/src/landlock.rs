//! Containing a child with Landlock and seccomp, where bubblewrap is missing or user
//! namespaces are off. A [`Confinement`] says what the child may see and change: it may
//! read and run everything (or, when readable paths are given, only those and its
//! writable paths), but only the writable folders (the workspace, the allowed paths, a
//! private temp folder the caller made) and a few device files may be written, made in or
//! removed from; and, unless the network is allowed, it may make no socket at all, only
//! Unix socket pairs.
//!
//! The work is split in two. In the parent, [`Confinement::prepare`] builds everything
//! that allocates or opens files: the Landlock ruleset (its rules added to an fd) and the
//! seccomp program. In the child, between the clone and the exec, [`Prepared::apply`]
//! only makes system calls on what was prepared, so it is async-signal-safe and may run
//! in a child that shares the parent's memory (see `spawn_confined`).
//!
//! What the child gets, by the kernel's Landlock ABI (each right the ABI does not know is
//! dropped, as the Landlock documentation's best-effort example does):
//! - ABI 1: read and execute everywhere (or beneath the readable paths); write, make and
//!   remove beneath the writable folders. A rename or link across folders is always
//!   refused (EXDEV), even inside one.
//! - ABI 2: renames and links between folders beneath the writable folders (REFER).
//! - ABI 3: truncation is a right of its own, granted where writing is.
//! - ABI 4: TCP bind and connect refused (when the network is off).
//! - ABI 5: ioctl on device files refused, but on the device files granted.
//! - ABI 6: no signal to, and no abstract Unix socket of, any process outside the sandbox.
//! - ABI 7: audit logging flags only; nothing new is asked for.
//!
//! Whatever the ABI, a seccomp filter (its rules in [`seccomp_filter`]) makes these
//! fail with EPERM, so that nothing the child does outlives the call or reaches the host:
//! - `setsid` and `setpgid`: the caller ends a run by killing the child's process group
//!   (the child's own session is made before the filter), and without a PID namespace a
//!   process that left the group would outlive the call. Programs that make a group of
//!   their own carry on in the child's (`timeout` ignores the error; but when its time
//!   runs out it then signals the whole group, the shell that ran it too).
//! - the SysV IPC calls (`msgget`, `semget`, `shmget` and those that use an object:
//!   `msgsnd`, `msgrcv`, `msgctl`, `semop`, `semtimedop`, `semctl`, `shmat`, `shmctl`)
//!   and the POSIX message queues (`mq_open`, `mq_unlink`): there is no IPC namespace,
//!   so an object made would outlive the call, and one of the host's could be used or
//!   removed by its id.
//! - `prlimit64`, `sched_setaffinity`, `sched_setscheduler`, `sched_setparam` and
//!   `sched_setattr` on any process but the caller (pid ≠ 0), and `setpriority` and
//!   `ioprio_set` on any but the caller or its process group (who ≠ 0, or a whole user):
//!   the limits, priorities and CPUs of the host are not the child's to change. A program
//!   that sets them for one of its own threads by its id (`pthread_setaffinity_np`) gets
//!   the error too.
//!
//! and unless the network is allowed, `socket` with EPERM for every family, Unix ones too
//! (a Unix socket in /run reaches docker, D-Bus, systemd), `socketpair` with EPERM for
//! every family but `AF_UNIX`, and `io_uring_setup` with ENOSYS (io_uring could make
//! sockets past seccomp). A system call of another architecture (i386 on x86-64, x32)
//! kills the child.
//!
//! A child running as root would keep capabilities that reach past Landlock (loading a
//! kernel module, making a block device node, raw I/O): [`Prepared::apply`] also clears
//! the ambient capabilities and drops from the bounding set every capability but the few
//! that act on files and processes the sandbox already bounds ([`KEPT_CAPABILITIES`]), so
//! the program it runs does not get them. Device nodes may not be made even beneath the
//! writable folders.
//!
//! What is not bounded: Landlock does not govern a file's metadata, so the child may
//! still `chmod`, `chown`, `utimensat` or set extended attributes of a file outside the
//! writable folders that it owns (or, as root, of any it can reach); it cannot change
//! the file's contents, names or links. Blocking those calls everywhere would break the
//! workspace, so they are left as they are.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, Result};

/// What a confined child may read and change. By default: everything readable, no
/// writable folder, the device files `/dev/null`, `/dev/zero`, `/dev/full` and `/dev/tty`
/// writable (those present), and no network.
#[derive(Clone, Debug)]
pub struct Confinement {
    config: Config,
}

#[derive(Clone, Debug)]
struct Config {
    /// None: everything (`/`) is readable.
    readable: Option<Vec<PathBuf>>,
    writable: Vec<PathBuf>,
    devices: Vec<PathBuf>,
    network: bool,
}

/// The device files a confined child may write by default (those that exist).
const DEFAULT_DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

impl Default for Confinement {
    fn default() -> Confinement {
        Confinement::new()
    }
}

impl Confinement {
    /// A confinement with the defaults: nothing writable but the default device files,
    /// and no network.
    pub fn new() -> Confinement {
        Confinement {
            config: Config {
                readable: None,
                writable: Vec::new(),
                devices: DEFAULT_DEVICES.iter().map(PathBuf::from).collect(),
                network: false,
            },
        }
    }

    /// Lets the child read and run files beneath `path` (a folder, or a single file);
    /// once one is given, only these paths, the writable paths and the device files are
    /// readable, not `/`. A path that is gone (or cannot be opened) when the child is
    /// started is skipped, not an error, and a symbolic link is not followed: what it
    /// points to is readable only where it is beneath a readable path itself. By
    /// default, there are none, and everything is readable.
    pub fn readable(&mut self, path: impl AsRef<Path>) -> &mut Confinement {
        self.config.readable.get_or_insert_with(Vec::new).push(path.as_ref().to_path_buf());
        self
    }

    /// Lets the child write, make and remove files beneath `path` (a folder, or a single
    /// file), which must exist when the child is started. By default, there are none.
    pub fn writable(&mut self, path: impl AsRef<Path>) -> &mut Confinement {
        self.config.writable.push(path.as_ref().to_path_buf());
        self
    }

    /// Lets the child read, write and truncate the device file `path` (skipped when it
    /// does not exist). By default, these are `/dev/null`, `/dev/zero`, `/dev/full` and
    /// `/dev/tty`.
    pub fn device(&mut self, path: impl AsRef<Path>) -> &mut Confinement {
        self.config.devices.push(path.as_ref().to_path_buf());
        self
    }

    /// Lets the child use the network (any socket, Unix ones too, TCP bind and connect).
    /// By default, this is disabled.
    pub fn network(&mut self, yes: bool) -> &mut Confinement {
        self.config.network = yes;
        self
    }

    /// Builds, in the parent, what [`Prepared::apply`] enforces in the child: the
    /// Landlock ruleset and the seccomp program. Fails with [`ErrorKind::InvalidInput`]
    /// when the kernel has no Landlock (a confined child is then never started) or a
    /// writable path cannot be opened (it must exist).
    pub(crate) fn prepare(&self) -> Result<Prepared> {
        let abi = landlock_abi();
        if abi < 1 {
            return Err(Error::new(ErrorKind::InvalidInput, "landlock is not available in this kernel"));
        }
        let fs = fs_rights(abi);
        let attr = RulesetAttr {
            handled_access_fs: fs,
            handled_access_net: if abi >= 4 && !self.config.network { NET_BIND_TCP | NET_CONNECT_TCP } else { 0 },
            scoped: if abi >= 6 { SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL } else { 0 },
        };
        // SAFETY: a valid attribute of the size given; the kernel returns a new fd (close-on-exec) or -1.
        let fd = unsafe {
            libc::syscall(libc::SYS_landlock_create_ruleset, &attr as *const RulesetAttr, size_of::<RulesetAttr>(), 0)
        };
        if fd < 0 {
            let err = Error::io(std::io::Error::last_os_error());
            return Err(Error::new(err.kind(), format!("landlock_create_ruleset: {}", err.message())));
        }
        // SAFETY: a new descriptor that nothing else owns.
        let ruleset = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
        match &self.config.readable {
            None => add_rule(&ruleset, Path::new("/"), FS_READ_FILE | FS_READ_DIR | FS_EXECUTE)?,
            Some(paths) => {
                for path in paths {
                    // Skipped when gone since it was listed, or a symbolic link.
                    add_readable_rule(&ruleset, path, FS_READ_FILE | FS_READ_DIR | FS_EXECUTE)?;
                }
            }
        }
        for path in &self.config.writable {
            // Device nodes are never made: a block device node in the workspace would be
            // a way to write the whole disk.
            add_rule(&ruleset, path, fs & !(FS_MAKE_CHAR | FS_MAKE_BLOCK)).map_err(|err| {
                // The caller's mistake, not a missing program: said so, with the path.
                Error::new(ErrorKind::InvalidInput, format!("a writable path of the confinement: {}", err.message()))
                    .with_path(path)
            })?;
        }
        for path in &self.config.devices {
            if path.exists() {
                add_rule(&ruleset, path, fs & (FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV))?;
            }
        }
        let filter = seccomp_filter(self.config.network);
        Ok(Prepared { ruleset, filter })
    }
}

/// A [`Confinement`] made ready in the parent, to be applied in the child.
pub(crate) struct Prepared {
    ruleset: OwnedFd,
    filter: Vec<libc::sock_filter>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared").field("ruleset", &self.ruleset).field("filter_len", &self.filter.len()).finish()
    }
}

/// A step of [`Prepared::apply`] that failed, for the error message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    NoNewPrivs = 1,
    Capabilities,
    Landlock,
    Seccomp,
}

impl Step {
    pub(crate) fn from_code(code: i32) -> Option<Step> {
        [Step::NoNewPrivs, Step::Capabilities, Step::Landlock, Step::Seccomp].into_iter().find(|s| *s as i32 == code)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Step::NoNewPrivs => "prctl(PR_SET_NO_NEW_PRIVS)",
            Step::Capabilities => "dropping capabilities",
            Step::Landlock => "landlock_restrict_self",
            Step::Seccomp => "seccomp",
        }
    }
}

/// The capabilities left in the bounding set of a confined child: those a root child
/// needs to act on the files and processes it can already reach (owners, modes, its own
/// children), and nothing that reaches past Landlock and seccomp (modules, raw I/O,
/// device nodes, mounts, BPF, the clock, reboot).
pub(crate) const KEPT_CAPABILITIES: [u32; 10] = [
    0,  // CAP_CHOWN
    1,  // CAP_DAC_OVERRIDE
    3,  // CAP_FOWNER
    4,  // CAP_FSETID
    5,  // CAP_KILL (Landlock's signal scope still bounds it, ABI 6)
    6,  // CAP_SETGID
    7,  // CAP_SETUID
    10, // CAP_NET_BIND_SERVICE
    18, // CAP_SYS_CHROOT
    29, // CAP_AUDIT_WRITE
];

impl Prepared {
    /// Confines the calling process, for good: no new privileges, the capabilities
    /// trimmed, the Landlock ruleset enforced, the seccomp filter installed. Makes
    /// system calls only (no allocation, no lock), so that it may run between a clone
    /// that shares the parent's memory and the exec. On failure returns the step and
    /// its errno, and the process is partly confined: it must exit.
    ///
    /// # Safety
    /// The caller must be a single-threaded child about to exec (it restricts only the
    /// calling thread, and for good).
    pub(crate) unsafe fn apply(&self) -> std::result::Result<(), (Step, i32)> {
        let errno = || *libc::__errno_location();
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err((Step::NoNewPrivs, errno()));
        }
        if libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno() != libc::EINVAL {
            return Err((Step::Capabilities, errno()));
        }
        for cap in 0..64u32 {
            if KEPT_CAPABILITIES.contains(&cap) {
                continue;
            }
            // EINVAL: past the kernel's last capability. EPERM: not privileged (no
            // CAP_SETPCAP), so there is nothing to drop that the exec would grant.
            if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0 {
                match errno() {
                    libc::EINVAL => break,
                    libc::EPERM => break,
                    e => return Err((Step::Capabilities, e)),
                }
            }
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, self.ruleset.as_raw_fd(), 0) != 0 {
            return Err((Step::Landlock, errno()));
        }
        let prog = libc::sock_fprog { len: self.filter.len() as u16, filter: self.filter.as_ptr() as *mut _ };
        if libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0, &prog as *const libc::sock_fprog) != 0 {
            return Err((Step::Seccomp, errno()));
        }
        Ok(())
    }
}

/// The Landlock ABI version of the running kernel: 0 when Landlock is not there (not
/// built, or not enabled at boot).
pub fn landlock_abi() -> i32 {
    // SAFETY: with the version flag the kernel reads no attribute.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v < 0 {
        0
    } else {
        v as i32
    }
}

/// Makes this (the host) process dumpable or not (`prctl(PR_SET_DUMPABLE)`). Not
/// dumpable, its `/proc/<pid>` files (memory, environment, maps) belong to root and other
/// processes of the same user may not read them nor ptrace it; it also writes no core
/// dump. Returns whether the setting took.
pub fn set_host_dumpable(dumpable: bool) -> bool {
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, libc::c_ulong::from(dumpable), 0, 0, 0) == 0
            && libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) == libc::c_int::from(dumpable)
    }
}

// The Landlock interface (include/uapi/linux/landlock.h).
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
const LANDLOCK_RULE_PATH_BENEATH: libc::c_uint = 1;

const FS_EXECUTE: u64 = 1 << 0;
const FS_WRITE_FILE: u64 = 1 << 1;
const FS_READ_FILE: u64 = 1 << 2;
const FS_READ_DIR: u64 = 1 << 3;
const FS_MAKE_CHAR: u64 = 1 << 6;
const FS_MAKE_BLOCK: u64 = 1 << 11;
const FS_TRUNCATE: u64 = 1 << 14;
const FS_IOCTL_DEV: u64 = 1 << 15;
/// The rights a rule on a file (not a folder) may carry.
const FS_FILE_RIGHTS: u64 = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;

const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;

const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

/// Every file system right the ABI knows: ABI 1 has execute … make_sym (bits 0–12), ABI 2
/// adds refer (13), ABI 3 truncate (14), ABI 5 ioctl_dev (15).
fn fs_rights(abi: i32) -> u64 {
    let top = match abi {
        1 => 13,
        2 => 14,
        3 | 4 => 15,
        _ => 16,
    };
    (1u64 << top) - 1
}

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Adds a rule granting `rights` beneath `path` (only the file rights when it is not a
/// folder), following a symbolic link.
fn add_rule(ruleset: &OwnedFd, path: &Path, rights: u64) -> Result<()> {
    let fd = open_path(path, 0).map_err(|err| err.with_path(path))?;
    add_rule_fd(ruleset, &fd, path, rights)
}

/// Adds a rule granting `rights` beneath the readable `path`, unless it is gone (or
/// cannot be opened) or is a symbolic link: a link is not followed, so that a link among
/// the readable paths does not make readable what it points to.
fn add_readable_rule(ruleset: &OwnedFd, path: &Path, rights: u64) -> Result<()> {
    let Ok(fd) = open_path(path, libc::O_NOFOLLOW) else { return Ok(()) };
    if file_type(&fd).map_err(|err| err.with_path(path))? == libc::S_IFLNK {
        return Ok(());
    }
    add_rule_fd(ruleset, &fd, path, rights)
}

/// Opens `path` with O_PATH (which reads nothing) and `flags`.
fn open_path(path: &Path, flags: libc::c_int) -> Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::new(ErrorKind::InvalidPath, "contains a NUL byte"))?;
    // SAFETY: a NUL-terminated path; O_PATH opens without reading.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | flags) };
    if fd < 0 {
        return Err(Error::io(std::io::Error::last_os_error()));
    }
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The `S_IFMT` bits of the file `fd` is open on.
fn file_type(fd: &OwnedFd) -> Result<libc::mode_t> {
    // SAFETY: fstat writes into the struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(Error::io(std::io::Error::last_os_error()));
    }
    Ok(st.st_mode & libc::S_IFMT)
}

/// Adds a rule granting `rights` beneath the file `fd` is open on (`path`, for errors).
fn add_rule_fd(ruleset: &OwnedFd, fd: &OwnedFd, path: &Path, rights: u64) -> Result<()> {
    let is_dir = file_type(fd).map_err(|err| err.with_path(path))? == libc::S_IFDIR;
    let rights = if is_dir { rights } else { rights & FS_FILE_RIGHTS };
    let attr = PathBeneathAttr { allowed_access: rights, parent_fd: fd.as_raw_fd() };
    // SAFETY: a valid rule attribute; the kernel only reads it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0,
        )
    };
    if rc != 0 {
        let err = Error::io(std::io::Error::last_os_error());
        return Err(Error::new(err.kind(), format!("landlock_add_rule: {}", err.message())).with_path(path));
    }
    Ok(())
}

// Classic BPF, as seccomp runs it (include/uapi/linux/filter.h, seccomp.h, audit.h).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x15;
const BPF_JMP_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
/// Offsets in `struct seccomp_data`: the syscall number, the architecture, and the
/// arguments (8 bytes each) from 16.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
const DATA_ARGS: u32 = 16;
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

const RET_EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
/// `which` of setpriority: PRIO_PROCESS 0 and PRIO_PGRP 1 act on the caller (who 0);
/// PRIO_USER 2 on every process of a user, the host's too. (The libc crate's type for it
/// differs between glibc and musl.)
const PRIO_USER: u32 = 2;
/// `which` of ioprio_set: IOPRIO_WHO_PROCESS 1 and IOPRIO_WHO_PGRP 2 act on the caller
/// (who 0); IOPRIO_WHO_USER 3 on every process of a user.
const IOPRIO_WHO_USER: u32 = 3;

/// A condition on an argument of a system call: its low 32 bits (the arguments these
/// rules look at are C `int`s, which the kernel truncates to 32 bits; both architectures
/// are little-endian).
#[derive(Clone, Copy)]
enum Arg {
    /// Argument `n` equals the value.
    Is(u32, u32),
    /// Argument `n` is below the value (unsigned: a negative int is not).
    Below(u32, u32),
}

/// A seccomp program built rule by rule: each rule is a block that either returns (its
/// system call matched) or falls through to the next, so every jump is short and forward
/// and no label is needed.
struct Filter(Vec<libc::sock_filter>);

impl Filter {
    /// Kills the process on a system call of another architecture (or, on x86-64, of
    /// the x32 ABI), and loads the system call number.
    fn new() -> Filter {
        let mut f = Filter(Vec::new());
        f.load(DATA_ARCH);
        f.jump(BPF_JMP_JEQ_K, AUDIT_ARCH, 1, 0);
        f.ret(libc::SECCOMP_RET_KILL_PROCESS);
        f.load(DATA_NR);
        #[cfg(target_arch = "x86_64")]
        {
            f.jump(BPF_JMP_JGE_K, X32_SYSCALL_BIT, 0, 1);
            f.ret(libc::SECCOMP_RET_KILL_PROCESS);
        }
        f
    }

    /// `nr` returns `action` (an errno), whatever its arguments.
    fn fail(&mut self, nr: libc::c_long, action: u32) -> &mut Filter {
        self.jump(BPF_JMP_JEQ_K, nr as u32, 0, 1);
        self.ret(action);
        self
    }

    /// `nr` fails with EPERM, whatever its arguments.
    fn deny(&mut self, nr: libc::c_long) -> &mut Filter {
        self.fail(nr, RET_EPERM)
    }

    /// `nr` is allowed when every condition holds, and fails with EPERM otherwise.
    fn allow_only_if(&mut self, nr: libc::c_long, conditions: &[Arg]) -> &mut Filter {
        let n = conditions.len() as u8;
        // Past this block: two instructions a condition, then allow and deny.
        self.jump(BPF_JMP_JEQ_K, nr as u32, 0, 2 * n + 2);
        for (i, cond) in conditions.iter().enumerate() {
            // From this condition's jump to the deny: the later conditions, the allow.
            let to_deny = 2 * (n - 1 - i as u8) + 1;
            match *cond {
                Arg::Is(arg, k) => {
                    self.load(DATA_ARGS + 8 * arg);
                    self.jump(BPF_JMP_JEQ_K, k, 0, to_deny);
                }
                Arg::Below(arg, k) => {
                    self.load(DATA_ARGS + 8 * arg);
                    self.jump(BPF_JMP_JGE_K, k, to_deny, 0);
                }
            }
        }
        self.ret(libc::SECCOMP_RET_ALLOW);
        self.ret(RET_EPERM);
        self
    }

    /// Allows every other system call.
    fn finish(mut self) -> Vec<libc::sock_filter> {
        self.ret(libc::SECCOMP_RET_ALLOW);
        self.0
    }

    fn load(&mut self, offset: u32) {
        self.0.push(libc::sock_filter { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset });
    }

    fn jump(&mut self, code: u16, k: u32, jt: u8, jf: u8) {
        self.0.push(libc::sock_filter { code, jt, jf, k });
    }

    fn ret(&mut self, action: u32) {
        self.0.push(libc::sock_filter { code: BPF_RET_K, jt: 0, jf: 0, k: action });
    }
}

/// The seccomp program of a confined child (the module documentation says why each rule
/// is there). The architecture is checked first; every system call no rule names is
/// allowed.
fn seccomp_filter(network: bool) -> Vec<libc::sock_filter> {
    use libc::*;
    let mut f = Filter::new();
    // A new session or process group would leave the group the caller kills.
    f.deny(SYS_setsid).deny(SYS_setpgid);
    // SysV IPC objects and POSIX message queues outlive the call (no IPC namespace).
    for nr in [SYS_msgget, SYS_msgsnd, SYS_msgrcv, SYS_msgctl, SYS_semget, SYS_semop, SYS_semtimedop, SYS_semctl] {
        f.deny(nr);
    }
    f.deny(SYS_shmget).deny(SYS_shmat).deny(SYS_shmctl).deny(SYS_mq_open).deny(SYS_mq_unlink);
    // prlimit64(pid, resource, new, old) and sched_*(pid, …): the caller only, pid 0.
    for nr in [SYS_prlimit64, SYS_sched_setaffinity, SYS_sched_setscheduler, SYS_sched_setparam, SYS_sched_setattr] {
        f.allow_only_if(nr, &[Arg::Is(0, 0)]);
    }
    // setpriority(which, who, prio) and ioprio_set(which, who, ioprio): the caller or its
    // process group (who 0), never a whole user (this module's PRIO_USER: libc's has
    // another type on musl).
    f.allow_only_if(SYS_setpriority, &[Arg::Below(0, self::PRIO_USER), Arg::Is(1, 0)]);
    f.allow_only_if(SYS_ioprio_set, &[Arg::Below(0, IOPRIO_WHO_USER), Arg::Is(1, 0)]);
    if !network {
        // socket(family, type, protocol): none, not even AF_UNIX (a socket in /run
        // reaches docker, D-Bus, systemd); socketpair(family, …): AF_UNIX only.
        f.deny(SYS_socket);
        f.allow_only_if(SYS_socketpair, &[Arg::Is(0, AF_UNIX as u32)]);
        // io_uring could make sockets past this filter: as if the kernel had none.
        f.fail(SYS_io_uring_setup, SECCOMP_RET_ERRNO | ENOSYS as u32);
    }
    f.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rights_follow_the_abi() {
        assert_eq!(fs_rights(1), 0x1fff);
        assert_eq!(fs_rights(2), 0x3fff);
        assert_eq!(fs_rights(3), 0x7fff);
        assert_eq!(fs_rights(4), 0x7fff);
        assert_eq!(fs_rights(5), 0xffff);
        assert_eq!(fs_rights(7), 0xffff);
        assert_eq!(size_of::<PathBeneathAttr>(), 12);
    }

    /// Runs the filter on one system call as the kernel would, and returns its action
    /// (a jump out of the program, or an instruction the kernel would refuse, panics).
    fn verdict(filter: &[libc::sock_filter], arch: u32, nr: libc::c_long, args: &[u64]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, arg) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&arg.to_le_bytes());
        }
        let (mut acc, mut pc) = (0u32, 0usize);
        loop {
            let insn = filter[pc];
            let jump = |taken: bool| if taken { insn.jt as usize } else { insn.jf as usize };
            pc += 1 + match insn.code {
                BPF_LD_W_ABS => {
                    let at = insn.k as usize;
                    acc = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
                    0
                }
                BPF_JMP_JEQ_K => jump(acc == insn.k),
                BPF_JMP_JGE_K => jump(acc >= insn.k),
                BPF_RET_K => return insn.k,
                code => panic!("instruction {code:#x} at {pc}"),
            };
        }
    }

    #[test]
    fn the_filter_kills_a_foreign_architecture_and_refuses_each_rule_with_its_errno() {
        use libc::*;
        const EPERM_: u32 = SECCOMP_RET_ERRNO | EPERM as u32;
        let (off, on) = (seccomp_filter(false), seccomp_filter(true));
        assert!(off.len() < 256 && on.len() < off.len());
        let is = |f: &[sock_filter], nr, args: &[u64]| verdict(f, AUDIT_ARCH, nr, args);
        // The architecture first: i386 (or x32 on x86-64) is killed before any rule.
        assert_eq!((off[0].code, off[0].k), (BPF_LD_W_ABS, DATA_ARCH));
        assert_eq!(verdict(&on, 0x4000_0003, SYS_read, &[]), SECCOMP_RET_KILL_PROCESS);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(is(&on, SYS_read | X32_SYSCALL_BIT as c_long, &[]), SECCOMP_RET_KILL_PROCESS);
        for f in [&off, &on] {
            assert_eq!(is(f, SYS_read, &[]), SECCOMP_RET_ALLOW);
            assert_eq!(is(f, SYS_fchmodat, &[]), SECCOMP_RET_ALLOW);
            // Whatever the network: no new session or group, no SysV IPC or POSIX queue.
            for nr in [SYS_setsid, SYS_setpgid, SYS_msgget, SYS_semget, SYS_shmget, SYS_shmat, SYS_msgctl, SYS_mq_open]
            {
                assert_eq!(is(f, nr, &[0, 0, 0]), EPERM_, "{nr}");
            }
            // Limits and scheduling of the caller only (pid 0; the kernel reads an int).
            for nr in
                [SYS_prlimit64, SYS_sched_setaffinity, SYS_sched_setscheduler, SYS_sched_setparam, SYS_sched_setattr]
            {
                assert_eq!(is(f, nr, &[0, 7]), SECCOMP_RET_ALLOW, "{nr}");
                assert_eq!(is(f, nr, &[1 << 32, 7]), SECCOMP_RET_ALLOW, "{nr}");
                assert_eq!(is(f, nr, &[1234, 7]), EPERM_, "{nr}");
            }
            // setpriority(which, who, prio): the caller or its group, never a user.
            assert_eq!(is(f, SYS_setpriority, &[PRIO_PROCESS as u64, 0, 5]), SECCOMP_RET_ALLOW);
            assert_eq!(is(f, SYS_setpriority, &[PRIO_PGRP as u64, 0, 5]), SECCOMP_RET_ALLOW);
            assert_eq!(is(f, SYS_setpriority, &[PRIO_PROCESS as u64, 1234, 5]), EPERM_);
            assert_eq!(is(f, SYS_setpriority, &[PRIO_USER as u64, 0, 5]), EPERM_);
            assert_eq!(is(f, SYS_setpriority, &[u64::MAX, 0, 5]), EPERM_);
            // ioprio_set(which, who, ioprio): IOPRIO_WHO_PROCESS 1 / PGRP 2 of the caller.
            assert_eq!(is(f, SYS_ioprio_set, &[1, 0, 0]), SECCOMP_RET_ALLOW);
            assert_eq!(is(f, SYS_ioprio_set, &[1, 1234, 0]), EPERM_);
            assert_eq!(is(f, SYS_ioprio_set, &[3, 0, 0]), EPERM_);
        }
        // The network off: no socket at all, Unix socket pairs only, no io_uring.
        let unix = AF_UNIX as u64;
        assert_eq!(is(&off, SYS_socket, &[unix, SOCK_STREAM as u64]), EPERM_);
        assert_eq!(is(&off, SYS_socket, &[AF_INET as u64, SOCK_STREAM as u64]), EPERM_);
        assert_eq!(is(&off, SYS_socketpair, &[unix, SOCK_STREAM as u64]), SECCOMP_RET_ALLOW);
        assert_eq!(is(&off, SYS_socketpair, &[AF_INET as u64, SOCK_STREAM as u64]), EPERM_);
        assert_eq!(is(&off, SYS_io_uring_setup, &[8]), SECCOMP_RET_ERRNO | ENOSYS as u32);
        // The network on: sockets of every family and io_uring.
        assert_eq!(is(&on, SYS_socket, &[AF_INET as u64, SOCK_STREAM as u64]), SECCOMP_RET_ALLOW);
        assert_eq!(is(&on, SYS_socket, &[unix, SOCK_STREAM as u64]), SECCOMP_RET_ALLOW);
        assert_eq!(is(&on, SYS_io_uring_setup, &[8]), SECCOMP_RET_ALLOW);
    }

    #[test]
    fn the_abi_is_reported_and_a_missing_writable_folder_is_an_error() {
        let abi = landlock_abi();
        println!("landlock abi: {abi}");
        if abi == 0 {
            println!("landlock is not available: skipped");
            assert!(Confinement::new().prepare().is_err());
            return;
        }
        let mut c = Confinement::new();
        c.writable("/no/such/folder/x");
        let err = c.prepare().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert_eq!(err.path(), Some(Path::new("/no/such/folder/x")));
        assert!(err.message().starts_with("a writable path of the confinement: "), "{err}");
        assert!(Confinement::new().writable(std::env::temp_dir()).prepare().is_ok());
    }
}
