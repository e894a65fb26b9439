//! Containing a child with Landlock and seccomp, where bubblewrap is missing or user
//! namespaces are off. A [`Confinement`] says what the child may change: everything may
//! be read and run, but only the writable folders (the workspace, the allowed paths, a
//! private temp folder the caller made) and a few device files may be written, made in or
//! removed from; and, unless the network is allowed, no socket but a Unix one may be made.
//!
//! The work is split in two. In the parent, [`Confinement::prepare`] builds everything
//! that allocates or opens files: the Landlock ruleset (its rules added to an fd) and the
//! seccomp program. In the child, between the clone and the exec, [`Prepared::apply`]
//! only makes system calls on what was prepared, so it is async-signal-safe and may run
//! in a child that shares the parent's memory (see `spawn_confined`).
//!
//! What the child gets, by the kernel's Landlock ABI (each right the ABI does not know is
//! dropped, as the Landlock documentation's best-effort example does):
//! - ABI 1: read and execute everywhere; write, make and remove beneath the writable
//!   folders. A rename or link across folders is always refused (EXDEV), even inside one.
//! - ABI 2: renames and links between folders beneath the writable folders (REFER).
//! - ABI 3: truncation is a right of its own, granted where writing is.
//! - ABI 4: TCP bind and connect refused (when the network is off).
//! - ABI 5: ioctl on device files refused, but on the device files granted.
//! - ABI 6: no signal to, and no abstract Unix socket of, any process outside the sandbox.
//! - ABI 7: audit logging flags only; nothing new is asked for.
//!
//! Whatever the ABI, unless the network is allowed a seccomp filter makes `socket` and
//! `socketpair` fail with EPERM for every family but `AF_UNIX` (so UDP, raw and netlink
//! sockets too) and `io_uring_setup` with ENOSYS (io_uring could make sockets past
//! seccomp); a system call of another architecture (i386 on x86-64, x32) kills the child.
//!
//! A child running as root would keep capabilities that reach past Landlock (loading a
//! kernel module, making a block device node, raw I/O): [`Prepared::apply`] also clears
//! the ambient capabilities and drops from the bounding set every capability but the few
//! that act on files and processes the sandbox already bounds ([`KEPT_CAPABILITIES`]), so
//! the program it runs does not get them. Device nodes may not be made even beneath the
//! writable folders.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, Result};

/// What a confined child may change. By default: no writable folder, the device files
/// `/dev/null`, `/dev/zero`, `/dev/full` and `/dev/tty` writable (those present), and no
/// network.
#[derive(Clone, Debug)]
pub struct Confinement {
    config: Config,
}

#[derive(Clone, Debug)]
struct Config {
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
                writable: Vec::new(),
                devices: DEFAULT_DEVICES.iter().map(PathBuf::from).collect(),
                network: false,
            },
        }
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

    /// Lets the child use the network (any socket, TCP bind and connect). By default,
    /// this is disabled.
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
        add_rule(&ruleset, Path::new("/"), FS_READ_FILE | FS_READ_DIR | FS_EXECUTE)?;
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
        let filter = if self.config.network { Vec::new() } else { socket_filter() };
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
        if !self.filter.is_empty() {
            let prog = libc::sock_fprog { len: self.filter.len() as u16, filter: self.filter.as_ptr() as *mut _ };
            if libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0, &prog as *const libc::sock_fprog) != 0
            {
                return Err((Step::Seccomp, errno()));
            }
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
/// folder).
fn add_rule(ruleset: &OwnedFd, path: &Path, rights: u64) -> Result<()> {
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::new(ErrorKind::InvalidPath, "contains a NUL byte").with_path(path))?;
    // SAFETY: a NUL-terminated path; O_PATH opens without reading.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(Error::io(std::io::Error::last_os_error()).with_path(path));
    }
    // SAFETY: a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: fstat writes into the struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(Error::io(std::io::Error::last_os_error()).with_path(path));
    }
    let rights = if st.st_mode & libc::S_IFMT == libc::S_IFDIR { rights } else { rights & FS_FILE_RIGHTS };
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
/// Offsets in `struct seccomp_data`: the syscall number, the architecture, the low half
/// of the first argument (little-endian).
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
const DATA_ARG0_LOW: u32 = 16;
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Where a jump of the filter goes.
#[derive(Clone, Copy, PartialEq)]
enum To {
    Next,
    Allow,
    Deny,
    Kill,
    Family,
    NoUring,
}

/// One instruction before its jumps are resolved.
enum Op {
    Load(u32),
    Jeq(u32, To, To),
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Jge(u32, To, To),
    Ret(u32),
    /// Marks where a target starts.
    Label(To),
}

/// The seccomp program: kill on a foreign architecture; `socket` and `socketpair` with
/// EPERM unless the family is AF_UNIX; `io_uring_setup` with ENOSYS; all else allowed.
fn socket_filter() -> Vec<libc::sock_filter> {
    use Op::*;
    let mut ops = vec![Load(DATA_ARCH), Jeq(AUDIT_ARCH, To::Next, To::Kill), Load(DATA_NR)];
    #[cfg(target_arch = "x86_64")]
    ops.push(Jge(X32_SYSCALL_BIT, To::Kill, To::Next));
    ops.extend([
        Jeq(libc::SYS_socket as u32, To::Family, To::Next),
        Jeq(libc::SYS_socketpair as u32, To::Family, To::Next),
        Jeq(libc::SYS_io_uring_setup as u32, To::NoUring, To::Next),
        Ret(libc::SECCOMP_RET_ALLOW),
        Label(To::Family),
        Load(DATA_ARG0_LOW),
        Jeq(libc::AF_UNIX as u32, To::Allow, To::Deny),
        Label(To::Deny),
        Ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        Label(To::NoUring),
        Ret(libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        Label(To::Allow),
        Ret(libc::SECCOMP_RET_ALLOW),
        Label(To::Kill),
        Ret(libc::SECCOMP_RET_KILL_PROCESS),
    ]);
    // Where each label lands, counting instructions only.
    let mut at = Vec::new();
    let mut n = 0usize;
    for op in &ops {
        match op {
            Label(to) => at.push((*to, n)),
            _ => n += 1,
        }
    }
    let target = |to: To, here: usize| -> u8 {
        if to == To::Next {
            return 0;
        }
        // Classic BPF jumps only forward, by at most 255.
        let (_, dest) = at.iter().find(|(t, _)| *t == to).copied().expect("every target has a label");
        u8::try_from(dest.checked_sub(here + 1).expect("a forward jump")).expect("a short jump")
    };
    let mut out = Vec::with_capacity(n);
    for op in &ops {
        let here = out.len();
        let insn = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
        match *op {
            Load(off) => out.push(insn(BPF_LD_W_ABS, 0, 0, off)),
            Jeq(k, t, f) => out.push(insn(BPF_JMP_JEQ_K, target(t, here), target(f, here), k)),
            Jge(k, t, f) => out.push(insn(BPF_JMP_JGE_K, target(t, here), target(f, here), k)),
            Ret(k) => out.push(insn(BPF_RET_K, 0, 0, k)),
            Label(_) => {}
        }
    }
    out
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

    #[test]
    fn the_filter_checks_the_architecture_first_and_ends_in_returns() {
        let f = socket_filter();
        assert_eq!((f[0].code, f[0].k), (BPF_LD_W_ABS, DATA_ARCH));
        assert_eq!((f[1].code, f[1].k, f[1].jt), (BPF_JMP_JEQ_K, AUDIT_ARCH, 0));
        // A mismatch jumps to the last instruction, the kill.
        assert_eq!(1 + 1 + f[1].jf as usize, f.len() - 1);
        assert_eq!(f.last().map(|i| (i.code, i.k)), Some((BPF_RET_K, libc::SECCOMP_RET_KILL_PROCESS)));
        // Every jump lands inside the program.
        for (i, insn) in f.iter().enumerate().filter(|(_, insn)| insn.code & 0x07 == 0x05) {
            assert!(i + 1 + (insn.jt.max(insn.jf) as usize) < f.len());
        }
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
